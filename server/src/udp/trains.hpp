// SPDX-License-Identifier: LGPL-2.1-or-later
// Building a train: the headers and iovecs of `count` consecutive datagrams of one record, from
// the bytes of it that are ready now. Pure (no socket, no clock): the sender decides how many, the
// socket (udp_socket.hpp) sends it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "udp/udp_socket.hpp"

namespace vod::server::udp {

// Which record a train carries, and where in it the train starts.
struct TrainRecord {
  std::uint32_t session_id = 0, epoch = 0;
  std::uint64_t record_seq = 0, record_length = 0, buffer_offset = 0;
  std::uint64_t sent = 0;     // the record's offset the train starts at
  std::uint32_t payload = 0;  // bytes per datagram (the last of the record may be shorter)
};

// Fills `t` (to `to`) with `count` datagrams of `r` from `ready`, the record's bytes from `r.sent`
// on (a datagram never reaches past them), the last flagged when it ends the record. Returns the
// record offset after the train. The iovecs point into `ready`: it must outlive the send.
std::uint64_t build_train(Train& t, const Endpoint& to, const TrainRecord& r, std::span<const std::uint8_t> ready, std::size_t count);

}  // namespace vod::server::udp
