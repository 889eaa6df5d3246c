// SPDX-License-Identifier: LGPL-2.1-or-later
// Live channels over UDP multicast (vod-server --live-multicast GROUP[:PORT]): each record a live
// channel publishes is sent once, as Write-Record data datagrams in stream-offset mode, to one
// multicast group, so any number of receivers without an RDMA NIC cost the server one copy.
// Receivers place each datagram in their own ring at (stream offset mod ring size), report holes
// and skip them (live has no repairs: the moment has passed). docs/write-record.md, "Live".
//
// The sender is driven by the channel's source thread (Channel::set_tap), right after the record is
// in the ring, with the record's bytes in hand: no copy, no extra thread, and the VoD and RDMA live
// paths do not see it. It cannot be used as an amplifier: it sends only what the channel's source
// produces, to a group the operator chose, and never answers a datagram.
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <span>
#include <string>

#include "vod/defaults.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::udp {

inline constexpr std::uint16_t kLiveMulticastPort = defaults::kLiveMulticastPort;  // the documented default

struct MulticastOptions {
  std::string group;  // an IPv4 or IPv6 multicast address
  std::uint16_t port = kLiveMulticastPort;
  std::string interface;         // IPv4: the address of the interface to send from; IPv6: its name; empty: the routing table's
  int ttl = 1;                   // hops (IPv6: the hop limit); 1 stays on the local network
  std::uint32_t payload = 1316;  // bytes per datagram: whole 188-byte TS packets (7 fit a 1500-byte MTU)
};

// Parses --live-multicast GROUP[:PORT] ([GROUP]:PORT for IPv6); throws std::invalid_argument.
MulticastOptions parse_multicast(const std::string& text);

// One published record of one channel.
struct MulticastRecord {
  std::uint32_t channel_id = 0;  // proto::live_channel_id(name)
  std::uint32_t stream_id = 0;
  std::uint64_t number = 0;  // the channel's record number
  std::uint64_t stream_offset = 0;
  std::uint16_t flags = 0;  // proto::kRecordKeyframe, ... (kRecordStreamOffset is added)
  std::span<const std::uint8_t> bytes;
};

struct MulticastStats {
  std::uint64_t records = 0, datagrams = 0, bytes = 0, send_errors = 0;
};

class MulticastSender {
 public:
  // Throws std::invalid_argument for an interface that does not fit the group, std::runtime_error
  // when the socket cannot be had or connected (closing it: no fd outlives a throw).
  explicit MulticastSender(const MulticastOptions& options);
  ~MulticastSender();
  MulticastSender(const MulticastSender&) = delete;
  MulticastSender& operator=(const MulticastSender&) = delete;

  // Sends the record as datagrams of at most payload() bytes (an end of stream: one empty datagram,
  // three times). Blocks only while the socket's send buffer is full, which paces it to the link.
  void send(const MulticastRecord& record);
  const MulticastStats& stats() const noexcept { return stats_; }
  std::uint32_t payload() const noexcept { return payload_; }
  std::string destination() const { return destination_; }

 private:
  UniqueFd fd_;
  std::uint32_t payload_ = 0;
  std::string destination_;
  MulticastStats stats_;
};

}  // namespace vod::server::udp
