// SPDX-License-Identifier: LGPL-2.1-or-later
// A fleet member's record in etcd, under PREFIX/members/HOST:PORT, as JSON (docs/protocol.md,
// "Member records"). A server writes its own under its lease; every client reads them all. A
// record is data from the network: decode_member() checks every field and bounds every list, and
// a record that fails is ignored with the reason, never trusted in part.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "vod/protocol/decode_result.hpp"

namespace vod::cluster {

inline constexpr unsigned kMemberRecordVersion = 1;
inline constexpr double kMaxWeight = 1000;  // a weight above this is refused as hostile
inline constexpr unsigned kMaxSpread = 16;  // top-k placement: k at most this
inline constexpr std::size_t kMaxRecordBytes = 65536;
inline constexpr std::size_t kMaxListed = 256;  // spread entries, live channels

struct MemberLoad {
  std::uint64_t connections = 0;   // RDMA connections, of every kind
  std::uint64_t udp_sessions = 0;  // Write-Record sessions with state
  // An estimate, labelled as one: connections × each movie's average bitrate. One-sided Reads are
  // invisible to the server, so what is read is not measured.
  double estimated_mbps = 0;
  double served_mbps = 0;  // measured: what Write-Record sent over the last second or so
  // The one load measure placement uses (cluster/placement.hpp): sessions on every transport.
  std::uint64_t sessions() const noexcept { return connections + udp_sessions; }
  bool operator==(const MemberLoad&) const = default;
};

struct MemberRecord {
  std::string host;  // what clients connect to (--advertise)
  std::uint16_t port = 0;
  double weight = 1;              // relative capacity, for weighted rendezvous hashing
  double nic_gbps = 0;            // the devices' active link speed in all; 0 unknown
  std::uint64_t cache_bytes = 0;  // --cache-size; 0 when everything is pinned
  MemberLoad load;
  std::uint32_t catalog_generation = 0;
  std::map<std::string, unsigned> spread;  // movie -> k: placed on the top k servers
  std::vector<std::string> live;           // live channels this server has
  std::string id() const;                  // host:port ([v6]:port)
  bool operator==(const MemberRecord&) const = default;
};

std::string encode_member(const MemberRecord& r);
// `key_id` is what follows PREFIX/members/ in the record's key: it must name the record's address.
proto::Decoded<MemberRecord> decode_member(std::string_view key_id, std::string_view json);

}  // namespace vod::cluster
