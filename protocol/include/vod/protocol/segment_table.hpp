// SPDX-License-Identifier: LGPL-2.1-or-later
// The segment cache (protocol version 2): a movie that is not pinned whole in memory is a sequence
// of segments of one size, each resident in a slot of the server's registered arena or not. Its
// segment table is an RDMA-readable region: a 64-byte header, then one 8-byte entry per segment. A
// client reads an entry, Reads the segment's bytes from the slot it names, then reads the entry
// again (fenced, on the same QP): unchanged, the bytes are the segment's. A client that finds a
// segment absent asks for it with a SegmentRequest Send and waits for the SegmentNotify.
// docs/protocol.md, "Segment cache".
#pragma once

#include <cstdint>
#include <vector>

#include "vod/protocol/message_header.hpp"

namespace vod::proto {

inline constexpr std::uint32_t kSegmentTableMagic = 0x52565354;  // "RVST"
inline constexpr std::size_t kSegmentTableHeaderSize = 64;
inline constexpr std::size_t kSegmentEntrySize = 8;
inline constexpr std::uint32_t kMinSegmentSize = 64u << 10;
inline constexpr std::uint32_t kMaxSegmentSize = 1u << 30;
inline constexpr std::uint32_t kMaxSlot = (1u << 24) - 1;

enum class SegmentState : std::uint8_t {
  absent = 0,    // in no slot: ask for it
  resident = 1,  // in `slot`, whole
};

// One entry: a 64-bit big-endian word, written by the server with one aligned 8-byte store, so a
// Read of it sees the old word or the new one. Bits 63..32 generation, 31..24 state, 23..0 slot.
// The generation of an entry only grows: it changes when the segment leaves its slot and again when
// it is filled into one, so an entry read twice with the same word was in that state in between.
struct SegmentEntry {
  std::uint32_t generation = 0;
  SegmentState state = SegmentState::absent;
  std::uint32_t slot = 0;  // resident only; 0 otherwise

  bool resident() const noexcept { return state == SegmentState::resident; }
  bool operator==(const SegmentEntry&) const = default;
};

std::uint64_t pack(const SegmentEntry& e) noexcept;
// A word read from a table: an undefined state, a slot beyond kMaxSlot or a non-zero slot of an
// absent segment is bad_field.
Decoded<SegmentEntry> unpack_segment_entry(std::uint64_t word);

struct SegmentTableHeader {
  std::uint32_t segment_size = 0;   // bytes per segment and per slot; a power of two
  std::uint32_t segment_count = 0;  // ceil(movie_size / segment_size)
  std::uint64_t movie_size = 0;
  std::uint64_t arena_length = 0;      // the arena's bytes: slot s is [s * segment_size, +segment_size)
  std::uint32_t read_deadline_ms = 0;  // a client drops a segment Read whose check completes later
  std::uint16_t request_credits = 0;   // segment requests a client may have unanswered at once
  std::uint32_t grace_ms = 0;          // a segment asked for within this is never evicted (0: none)

  bool operator==(const SegmentTableHeader&) const = default;
};

struct WireSegmentTableHeader {
  be32 magic;
  std::uint8_t version;  // 2
  std::uint8_t reserved0;
  be16 header_length;  // 64: entries start here
  be32 segment_size;
  be32 segment_count;
  be64 movie_size;
  be64 arena_length;
  be32 read_deadline_ms;
  be16 request_credits;
  be16 reserved1;
  be32 grace_ms;
  std::uint8_t reserved2[20];
};
static_assert(sizeof(WireSegmentTableHeader) == kSegmentTableHeaderSize);

// The bytes of a table's header and `entries` (for the server, tests and fuzzing).
std::vector<std::uint8_t> encode_segment_table(const SegmentTableHeader& h, const std::vector<SegmentEntry>& entries);
// Decodes the header, checking it against itself: sizes, count, and a region of `region_length`
// bytes (header + count entries).
Decoded<SegmentTableHeader> decode_segment_table_header(Bytes buf, std::uint64_t region_length);
// The entries after a decoded header, `count` words from `buf` (which starts at the first entry).
Decoded<std::vector<SegmentEntry>> decode_segment_entries(Bytes buf, std::uint32_t count, std::uint32_t max_slot);

// With tokens the accept gives the arena no rkey (rkey 0): a client reads a slot only through the
// window rkey that answered its request for the segment in it, and only with Reads it posts within
// this many milliseconds of sending that request: the grace time, and at least a quarter of the
// read deadline (so that with no grace the Reads that waited for the answer still go out).
constexpr std::uint32_t window_use_ms(std::uint32_t grace_ms, std::uint32_t read_deadline_ms) noexcept {
  return grace_ms > read_deadline_ms / 4 ? grace_ms : read_deadline_ms / 4;
}

// Offset of segment `segment`'s entry in the table region.
constexpr std::uint64_t segment_entry_offset(std::uint32_t segment) noexcept {
  return kSegmentTableHeaderSize + std::uint64_t{segment} * kSegmentEntrySize;
}

// ------------------------------------------------------------------ messages (Send / Receive)

// The largest segment message a receiver must be ready for: later revisions may append fields.
inline constexpr std::size_t kSegmentMessageMax = 128;
inline constexpr std::uint16_t kMaxReadAhead = 64;

// Client -> server: make `segment` of catalog entry `movie_index` (in the connection's catalog
// generation) resident, then the next `ahead` segments as read-ahead, and answer for `segment`.
struct SegmentRequest {
  std::uint32_t movie_index = 0;
  std::uint32_t segment = 0;
  std::uint16_t ahead = 0;
  std::uint32_t request_id = 0;  // echoed in the answer

  bool operator==(const SegmentRequest&) const = default;
};

struct WireSegmentRequest {
  WireHeader header;  // type segment_request, length 24
  be32 movie_index;
  be32 segment;
  be16 ahead;
  be16 reserved;
  be32 request_id;
};
static_assert(sizeof(WireSegmentRequest) == 24);

enum class SegmentStatus : std::uint16_t {
  ok = 0,             // resident: `entry` is its word, `rkey` reads its slot
  out_of_range = 1,   // no such segment in that movie
  unknown_movie = 2,  // no such entry in the connection's catalog, or it is not a cached movie
  disk_error = 3,     // the server could not read it from disk; the reason is in its log
  refused = 4,        // this connection may not read that movie (its token is for another)
  busy = 5,           // no memory left to isolate the read (--isolation-memory): try again later
  origin_error = 6,   // the server could not fetch it from its HTTP origin (down, slow, refusing); the reason is in its log
  changed = 7,        // the movie changed at the server's origin: this version is gone (a new catalog lists the new one)
};
inline constexpr std::uint16_t kMaxSegmentStatus = 7;
const char* to_string(SegmentStatus s) noexcept;

// Server -> client: one per request, once the segment is resident (or cannot be).
struct SegmentNotify {
  std::uint32_t movie_index = 0;
  std::uint32_t segment = 0;
  std::uint64_t entry = 0;  // the entry's word (pack) when ok
  std::uint32_t rkey = 0;   // the rkey that reads the slot on this connection
  SegmentStatus status = SegmentStatus::ok;
  std::uint32_t request_id = 0;

  bool operator==(const SegmentNotify&) const = default;
};

struct WireSegmentNotify {
  WireHeader header;  // type segment_notify, length 40
  be32 movie_index;
  be32 segment;
  be64 entry;
  be32 rkey;
  be16 status;
  be16 reserved0;
  be32 request_id;
  be32 reserved1;
};
static_assert(sizeof(WireSegmentNotify) == 40 && sizeof(WireSegmentNotify) <= kSegmentMessageMax);

std::vector<std::uint8_t> encode(const SegmentRequest& r);
std::vector<std::uint8_t> encode(const SegmentNotify& n);
Decoded<SegmentRequest> decode_segment_request(Bytes buf);
Decoded<SegmentNotify> decode_segment_notify(Bytes buf);

}  // namespace vod::proto
