// SPDX-License-Identifier: LGPL-2.1-or-later
// What the UDP side serves, and which request gets which bytes or which error: a pure function, as
// admit() is for RDMA connections, unit-tested without a socket.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/write_record.hpp"

namespace vod::server::udp {

// One catalog generation as the UDP side serves it: the catalog bytes (its descriptors carry only
// lengths: a UDP client has no rkey to use) and every movie's bytes and keyframe index by name hash.
struct UdpRegions {
  std::uint32_t generation = 0;
  std::vector<std::uint8_t> catalog;
  struct Movie {
    std::span<const std::uint8_t> bytes;
    std::span<const std::uint8_t> index;
    std::shared_ptr<const void> owner;  // keeps both alive while a job sends from them
  };
  std::unordered_map<std::uint64_t, Movie> movies;
  std::unordered_map<std::uint64_t, std::string> live;  // live channels: listed, not served over UDP
};

// The catalog a UDP client reads: the RDMA catalog's entries with their descriptors' addresses and
// rkeys zeroed.
std::vector<std::uint8_t> udp_catalog(proto::Catalog catalog);

struct UdpLimits {
  std::uint64_t max_record = 16u << 20;  // the largest range one request may ask for
  std::uint32_t max_payload = 1416;      // the server's cap on payload per datagram
};

// What to send for an admitted request.
struct UdpJob {
  std::span<const std::uint8_t> bytes;  // the requested range
  std::shared_ptr<const void> owner;    // keeps `bytes` alive
  std::uint32_t payload = 0;            // bytes per datagram
};

using UdpDecision = std::variant<UdpJob, proto::WriteRecordError>;

// The cookie has been checked already (it needs the peer's address and the clock).
UdpDecision admit_udp(const proto::WriteRecordRequest& r, const UdpRegions& regions, const UdpLimits& limits);

}  // namespace vod::server::udp
