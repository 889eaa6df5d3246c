// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel's DVR window (vod-server --live-dvr; docs/protocol.md, "Live DVR window"): the
// channel's last minutes on disk, read one-sided through the segment cache, and the REMOTE_READ
// **window index** region that says which stream offsets and publish times it holds and where its
// keyframes are.
//
// The window is a file of N chunks of the cache's segment size S. Stream offset s is in chunk
// (s / S) mod N, at s mod S; the chunk of segment g = s / S is overwritten when segment g + N is
// written. A window's segment table (vod/protocol/segment_table.hpp) has N entries, one per chunk,
// and an entry's generation is the chunk's **lap**, g / N, of the segment it holds: a client that
// wants segment g uses entry g mod N only while its generation is g / N.
//
// The region: a 128-byte header, then `keyframe_capacity` keyframe marks of 48 bytes, mark k (the
// k-th published, from 0) at 128 + 48 × (k mod capacity). The writer stores a mark's words between
// its two numbers (k + 1), then advances keyframes_next; a mark whose two numbers differ, or are not
// k + 1, is being rewritten: skip it. The header is a seqlock, as the live header is:
// seq_begin first (the last word), the fields, seq_end last (the second word).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vod/protocol/byte_order.hpp"
#include "vod/protocol/decode_result.hpp"
#include "vod/protocol/message_header.hpp"

namespace vod::proto {

inline constexpr std::uint32_t kWindowMagic = 0x52564457;  // "RVDW"
inline constexpr std::uint8_t kWindowVersion = 1;
inline constexpr std::uint32_t kWindowEndOfStream = 1u << 0;        // header flags: the source stopped after end_offset
inline constexpr std::uint32_t kWindowMarkKeyframe = 1u << 0;       // mark flags: a keyframe record starts at the offset
inline constexpr std::uint32_t kWindowMarkDiscontinuity = 1u << 1;  // ... and a new stream (a restart, a loop) with it
inline constexpr std::uint32_t kWindowMaxCapacity = 1u << 20;
// What a client reads a window as: a movie of stream offsets, which only grow (2^56 bytes: years
// of any stream).
inline constexpr std::uint64_t kWindowStreamBytes = 1ull << 56;
// Over Write-Record a window's ranges are stream offsets too; a range whose segment the window does
// not hold whole now (overwritten, or being written) is refused (internal_error) with this reason.
inline constexpr std::string_view kOutsideWindowReason = "not in the live window now";

struct WindowHeader {
  std::uint64_t sequence = 0;
  std::uint64_t oldest_offset = 0;  // the window's first byte: a keyframe's (end_offset when it holds none)
  std::uint64_t oldest_time_us = 0;
  std::uint64_t end_offset = 0;  // end of the newest record written to the window
  std::uint64_t end_time_us = 0;
  std::uint64_t keyframes_next = 0;  // marks published so far
  std::uint32_t segment_size = 0;
  std::uint32_t segment_count = 0;  // N
  std::uint32_t keyframe_capacity = 0;
  std::uint32_t duration_ms = 0;  // what the server keeps (--live-dvr); the bytes may hold less
  std::uint32_t stream_id = 0;
  std::uint32_t flags = 0;
  bool operator==(const WindowHeader&) const = default;

  std::uint64_t bytes() const noexcept { return std::uint64_t{segment_size} * segment_count; }
};

struct WireWindowHeader {
  be32 magic;
  std::uint8_t version;
  std::uint8_t reserved0;
  be16 header_length;  // 128
  be64 seq_end;
  be64 oldest_offset;
  be64 oldest_time_us;
  be64 end_offset;
  be64 end_time_us;
  be64 keyframes_next;
  be32 segment_size;
  be32 segment_count;
  be32 keyframe_capacity;
  be32 duration_ms;
  be32 stream_id;
  be32 flags;
  std::uint8_t reserved1[40];
  be64 seq_begin;
};
static_assert(sizeof(WireWindowHeader) == 128);

struct WindowMark {
  std::uint64_t number = 0;  // k + 1
  std::uint64_t offset = 0;
  std::uint64_t publish_time_us = 0;  // the server's CLOCK_REALTIME when the record was published
  std::uint64_t pts_us = 0;           // the record's PTS (µs), 0 when unknown: for display only, it wraps and resets
  std::uint32_t stream_id = 0;
  std::uint32_t flags = 0;
  bool operator==(const WindowMark&) const = default;
};

// number_end sits first and number_begin last, as the header's sequence words do: the writer stores
// number_begin, the fields, then number_end, so a mark copied whole or from low addresses to high
// with both numbers equal was complete.
struct WireWindowMark {
  be64 number_end;
  be64 offset;
  be64 publish_time_us;
  be64 pts_us;
  be32 stream_id;
  be32 flags;
  be64 number_begin;
};
static_assert(sizeof(WireWindowMark) == 48);

inline constexpr std::uint64_t window_region_length(std::uint32_t capacity) noexcept {
  return sizeof(WireWindowHeader) + std::uint64_t{capacity} * sizeof(WireWindowMark);
}
inline constexpr std::uint64_t window_mark_offset(std::uint64_t k, std::uint32_t capacity) noexcept {
  return sizeof(WireWindowHeader) + (k % capacity) * sizeof(WireWindowMark);
}

// A whole region read at once: its header, and the marks still valid in it (oldest first, each at
// or after the header's oldest_offset and before its end_offset). A torn header is
// DecodeFault::inconsistent ("torn"): read it again.
struct WindowIndex {
  WindowHeader header;
  std::vector<WindowMark> marks;
  bool operator==(const WindowIndex&) const = default;
};
Decoded<WindowIndex> decode_window(Bytes region);
// The header alone (the region's first 128 bytes or more), checked as decode_window checks it:
// what a viewer that only wants the window's range reads (rdmasrc's seeking query).
Decoded<WindowHeader> decode_window_header(Bytes region);
// Mark k (the k-th published, from 0) from its 48-byte slot: nullopt when the slot does not hold it
// whole (its two numbers are not both k + 1: being rewritten, or a later mark's), or is short.
std::optional<WindowMark> decode_window_mark(Bytes slot, std::uint64_t k);
// The bytes of a consistent region (the server writes words in place; for tests and fuzzing).
std::vector<std::uint8_t> encode(const WindowIndex& w);

// A window is listed in the catalog as a segmented movie (movie = the arena, segments = its table,
// index = the window index) named ".dvr/CHANNEL": a hidden folder, which no scan of a media
// directory lists, so the name never meets a movie's; not flagged live, so catalog decoders that
// predate windows read it as a movie of raw bytes.
inline constexpr std::string_view kWindowPrefix = ".dvr/";
std::string window_entry_name(std::string_view channel);
// The channel a window entry's name names; nullopt for any other name.
std::optional<std::string> window_channel(std::string_view entry_name);

// Where a viewer starts for a wanted publish time: the newest keyframe mark at or before it, or the
// oldest when the time is before the window. nullopt: no keyframe.
std::optional<WindowMark> keyframe_at_or_before(const WindowIndex& w, std::uint64_t time_us);

}  // namespace vod::proto
