// SPDX-License-Identifier: LGPL-2.1-or-later
// Live streaming: the server writes a live source into a registered ring and Sends a notification
// per published record; the client RDMA-Reads the bytes and returns credits. A small REMOTE_READ
// header region beside the ring holds the newest positions, written seqlock-style, so that a client
// can also follow the stream by reading it, and can prove that bytes it read were not overwritten.
// docs/protocol.md, "Live streaming".
#pragma once

#include <cstdint>
#include <vector>

#include "vod/protocol/message_header.hpp"

namespace vod::proto {

// Notification flags.
inline constexpr std::uint32_t kLiveKeyframe = 1u << 0;       // a keyframe (random access point) starts at stream_offset
inline constexpr std::uint32_t kLiveEndOfStream = 1u << 1;    // the source stopped; length may be 0
inline constexpr std::uint32_t kLiveDiscontinuity = 1u << 2;  // the source restarted or looped at stream_offset: reset decoders
inline constexpr std::uint32_t kLiveCoalesced = 1u << 3;      // several records in one notification (the client was out of credit)
inline constexpr std::uint32_t kLiveUnitStart = 1u << 4;      // an access unit (frame) of the main stream starts at stream_offset
inline constexpr std::uint32_t kLiveKnownFlags = kLiveKeyframe | kLiveEndOfStream | kLiveDiscontinuity | kLiveCoalesced | kLiveUnitStart;

inline constexpr std::uint64_t kNoKeyframe = ~std::uint64_t{0};

// The largest live message a receiver must be ready for: later revisions may append fields up to it.
inline constexpr std::size_t kLiveMessageMax = 256;

struct LiveNotify {
  std::uint32_t stream_id = 0;  // changes when the source restarts (a new encoder session)
  std::uint32_t flags = 0;
  std::uint64_t seq = 0;                        // +1 per notification to this client: a gap means it missed some
  std::uint64_t stream_offset = 0;              // start of the published range; ring offset = stream offset mod ring size
  std::uint32_t length = 0;                     // bytes published; 0 only with end of stream
  std::uint32_t credits = 0;                    // Sends the server may still post before it needs more credit
  std::uint64_t oldest_offset = 0;              // oldest stream offset still in the ring: older bytes are overwritten
  std::uint64_t keyframe_offset = kNoKeyframe;  // newest keyframe start at or before the range's end
  std::uint64_t pts_us = 0;                     // presentation time at stream_offset, 0 when unknown
  std::uint64_t publish_time_us = 0;            // server's CLOCK_REALTIME when the range's last record was published

  bool operator==(const LiveNotify&) const = default;
};

struct WireLiveNotify {
  WireHeader header;  // type live_notify, length 72
  be32 stream_id;
  be32 flags;
  be64 seq;
  be64 stream_offset;
  be32 length;
  be32 credits;
  be64 oldest_offset;
  be64 keyframe_offset;
  be64 pts_us;
  be64 publish_time_us;
};
static_assert(sizeof(WireLiveNotify) == 72 && sizeof(WireLiveNotify) <= kLiveMessageMax);

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

// ------------------------------------------------------------------ the live header region

inline constexpr std::uint32_t kLiveHeaderMagic = 0x52564C48;  // "RVLH"
inline constexpr std::uint32_t kLiveHeaderEndOfStream = 1u << 0;
inline constexpr std::uint32_t kLiveHeaderKnownFlags = kLiveHeaderEndOfStream;

// One snapshot of the writer's positions (stream offsets).
struct LiveHeader {
  std::uint64_t write_offset = 0;               // end of the newest published record
  std::uint64_t oldest_offset = 0;              // oldest byte still in the ring; declared before it is overwritten
  std::uint64_t keyframe_offset = kNoKeyframe;  // start of the newest keyframe record
  std::uint64_t keyframe_pts_us = 0;
  std::uint32_t stream_id = 0;
  std::uint32_t flags = 0;
  std::uint64_t sequence = 0;  // the writer's update count (even: no update under way)

  bool operator==(const LiveHeader&) const = default;
};

// 64 bytes, one cache line, 8-byte fields at 8-byte offsets. The writer stores seq_begin first and
// seq_end last (with release fences between); a reader that sees them equal holds a consistent
// snapshot, whether the NIC copies the line atomically or from low addresses to high (seq_end sits
// first and seq_begin last for that case).
struct WireLiveHeader {
  be32 magic;
  std::uint8_t version;
  std::uint8_t reserved0;
  be16 header_length;  // 64
  be64 seq_end;
  be64 write_offset;
  be64 oldest_offset;
  be64 keyframe_offset;
  be64 keyframe_pts_us;
  be32 stream_id;
  be32 flags;
  be64 seq_begin;
};
static_assert(sizeof(WireLiveHeader) == 64);

// Decodes a header read from a ring of `ring_size` bytes. A torn snapshot (seq_begin != seq_end)
// is DecodeFault::inconsistent with "torn" in the message: read it again.
Decoded<LiveHeader> decode_live_header(Bytes buf, std::uint64_t ring_size);
// The bytes of a consistent header (for tests and fuzzing; the server writes fields in place).
std::vector<std::uint8_t> encode(const LiveHeader& h);

}  // namespace vod::proto
