// SPDX-License-Identifier: LGPL-2.1-or-later
// What the UDP side serves, and which request gets which bytes or which error, by when it must be
// sent, and how many datagrams one send carries: pure functions, as admit() is for RDMA
// connections, unit-tested without a socket.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "cache/cached_file.hpp"
#include "vod/defaults.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/write_record.hpp"

namespace vod::server::udp {

// One catalog generation as the UDP side serves it: the catalog bytes (its descriptors carry only
// lengths: a UDP client has no rkey to use) and every movie's bytes and keyframe index by name hash.
struct UdpRegions {
  std::uint32_t generation = 0;
  std::vector<std::uint8_t> catalog;
  struct Movie {
    std::span<const std::uint8_t> bytes;  // empty for a movie in the segment cache
    std::span<const std::uint8_t> index;
    std::shared_ptr<const void> owner;          // keeps both alive while a job sends from them
    std::shared_ptr<cache::CachedFile> cached;  // a movie in the segment cache: its segments
  };
  std::unordered_map<std::uint64_t, Movie> movies;
  std::unordered_map<std::uint64_t, std::string> live;  // live channels: listed, not served over UDP
};

// The catalog a UDP client reads: the RDMA catalog's entries with their descriptors' addresses and
// rkeys zeroed.
std::vector<std::uint8_t> udp_catalog(proto::Catalog catalog);

struct UdpLimits {
  std::uint64_t max_record = defaults::kUdpMaxRecord;    // the largest range one request may ask for
  std::uint32_t max_payload = defaults::kUdpMaxPayload;  // the server's cap on payload per datagram
  // The floor on the rate a request may ask for. A job paced slower than this would hold its
  // place in the job table for ever (at 1 bit/s a 16 MiB range takes 4 years).
  std::uint64_t min_rate_bps = 1'000'000;
};

// What to send for an admitted request.
struct UdpJob {
  std::span<const std::uint8_t> bytes;  // the requested range (empty for a movie in the segment cache)
  std::shared_ptr<const void> owner;    // keeps `bytes` alive: the movie, or the catalog generation
  std::uint32_t payload = 0;            // bytes per datagram
  // A movie served from the segment cache: the requested range of it, sent from the slots its
  // segments are in as the job goes (UdpService faults them in).
  std::shared_ptr<cache::CachedFile> cached;
  std::uint64_t offset = 0, length = 0;

  std::uint64_t size() const noexcept { return cached ? length : bytes.size(); }
};

using UdpDecision = std::variant<UdpJob, proto::WriteRecordError>;

// The cookie has been checked already (it needs the peer's address and the clock). `regions` is
// the generation the request is answered from; the job it gives shares ownership of the bytes it
// reads, so a new generation published while the job is queued frees nothing it still sends.
UdpDecision admit_udp(const proto::WriteRecordRequest& r, const std::shared_ptr<const UdpRegions>& regions, const UdpLimits& limits);

// "1 Mbit/s", "2.5 Mbit/s", "999 bit/s": for reasons and logs.
std::string rate_text(double bps);

// By when a job of `bytes` paced at `rate_bps` must be done, else it is dropped (the client asks
// again for what is missing): twice its time on the wire at that rate (room to share the link
// with other addresses), plus `grace` (a loaded server), and never later than `max_life` after it
// was admitted. Every job has one, so the job table drains whatever the clients do.
struct JobLife {
  std::chrono::milliseconds grace{2000};
  std::chrono::milliseconds max_life{30000};
};
std::chrono::steady_clock::time_point job_deadline(std::chrono::steady_clock::time_point admitted, std::uint64_t bytes, double rate_bps,
                                                   const JobLife& life);

// How many datagrams one send (one sendmsg: a UDP GSO train when more than one) carries: as many
// as `budget` bytes (header included) and what is `left` of the record allow, and with GSO at most
// kGsoSegments and kGsoBytes in all (the kernel's limits for one train); without GSO one. Never 0
// while the budget covers one datagram and something is left: a payload too large for two in one
// train is sent one a train.
inline constexpr std::size_t kGsoSegments = 64;  // the kernel's UDP_MAX_SEGMENTS
inline constexpr std::size_t kGsoBytes = 65000;  // a train is one IP packet before segmentation: under 64 KiB
std::size_t datagrams_per_send(std::uint32_t payload, double budget, std::uint64_t left, bool gso) noexcept;

}  // namespace vod::server::udp
