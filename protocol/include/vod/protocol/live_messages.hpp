// Live streaming: the server writes a live source into a registered ring and Sends a notification
// per published range; the client RDMA-Reads the range and returns credits. docs/protocol.md, "Live".
// Specified in v1; the live issue implements the endpoints.
#pragma once

#include <cstdint>
#include <vector>

#include "vod/protocol/message_header.hpp"

namespace vod::proto {

inline constexpr std::uint32_t kLiveKeyframe = 1u << 0;       // the range starts at a keyframe
inline constexpr std::uint32_t kLiveEndOfStream = 1u << 1;    // no data follows; length may be 0
inline constexpr std::uint32_t kLiveDiscontinuity = 1u << 2;  // the source restarted; reset decoders
inline constexpr std::uint32_t kLiveKnownFlags = kLiveKeyframe | kLiveEndOfStream | kLiveDiscontinuity;

struct LiveNotify {
  std::uint32_t stream_id = 0;
  std::uint32_t flags = 0;
  std::uint64_t seq = 0;            // increments by one per notification
  std::uint64_t stream_offset = 0;  // absolute byte offset in the stream; ring offset = this mod ring size
  std::uint32_t length = 0;         // bytes published at stream_offset
  std::uint32_t credits = 0;        // Sends the server may still post before it needs more credit
  std::uint64_t oldest_offset = 0;  // oldest stream offset still in the ring; older data is overwritten
  std::uint64_t pts_us = 0;         // presentation time at stream_offset, 0 when unknown

  bool operator==(const LiveNotify&) const = default;
};

struct WireLiveNotify {
  WireHeader header;  // type live_notify, length 56
  be32 stream_id;
  be32 flags;
  be64 seq;
  be64 stream_offset;
  be32 length;
  be32 credits;
  be64 oldest_offset;
  be64 pts_us;
};
static_assert(sizeof(WireLiveNotify) == 56);

struct LiveCredit {
  std::uint32_t credits = 0;    // receives the client has posted since its last credit message
  std::uint64_t acked_seq = 0;  // highest notification seq the client has consumed

  bool operator==(const LiveCredit&) const = default;
};

struct WireLiveCredit {
  WireHeader header;  // type live_credit, length 24
  be32 credits;
  be32 reserved;
  be64 acked_seq;
};
static_assert(sizeof(WireLiveCredit) == 24);

std::vector<std::uint8_t> encode(const LiveNotify& n);
std::vector<std::uint8_t> encode(const LiveCredit& c);
Decoded<LiveNotify> decode_live_notify(Bytes buf);
Decoded<LiveCredit> decode_live_credit(Bytes buf);

}  // namespace vod::proto
