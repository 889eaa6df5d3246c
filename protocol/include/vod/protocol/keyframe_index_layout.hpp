// The keyframe-index region of a movie: presentation time -> byte offset where a reader must start to
// decode from that keyframe. Clients read it by RDMA and seek by time without asking the server.
// docs/protocol.md, "Keyframe-index region".
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vod/protocol/message_header.hpp"

namespace vod::proto {

inline constexpr std::uint32_t kIndexMagic = 0x52564B49;  // "RVKI"

// Index flags: what a byte offset means for this container (docs/media.md).
inline constexpr std::uint16_t kIndexDirectEntry = 1u << 0;  // decoding may start at the offset alone (MPEG-TS)
inline constexpr std::uint16_t kIndexNeedsHeader = 1u << 1;  // the container header (e.g. moov) must be read first
// Version 2: the server has not built this index yet (entry_count 0). The region is its final size,
// and the server fills it in place and clears this flag: read it again later.
inline constexpr std::uint16_t kIndexPending = 1u << 2;
inline constexpr std::uint16_t kIndexKnownFlags = kIndexDirectEntry | kIndexNeedsHeader | kIndexPending;

struct Keyframe {
  std::uint64_t time_us = 0;  // presentation time from the start of the movie
  std::uint64_t offset = 0;   // byte offset in the movie

  bool operator==(const Keyframe&) const = default;
};

struct KeyframeIndex {
  std::uint64_t movie_size = 0;
  std::uint16_t flags = 0;
  std::vector<Keyframe> entries;  // time non-decreasing

  // The last keyframe at or before t, or the first keyframe when t precedes it; nullptr when empty.
  const Keyframe* at_or_before(std::uint64_t time_us) const noexcept;
  bool operator==(const KeyframeIndex&) const = default;
};

struct WireIndexHeader {
  be32 magic;
  std::uint8_t version;
  std::uint8_t reserved0;
  be16 header_length;  // 32 in v1
  be32 entry_count;
  be16 entry_size;  // 16 in v1
  be16 flags;
  be64 movie_size;
  be32 entries_crc32c;  // version 2: CRC32C of the entries (count x entry_size bytes); 0 in version 1
  be32 reserved1;
};
static_assert(sizeof(WireIndexHeader) == 32);
// Offset of the 8 bytes a server publishes a filled-in index with, in one aligned store:
// entry_count, entry_size and flags (after the entries and their CRC).
inline constexpr std::size_t kIndexPublishWord = 8;

struct WireIndexEntry {
  be64 time_us;
  be64 offset;
};
static_assert(sizeof(WireIndexEntry) == 16);

// Throws std::invalid_argument when entries are out of time order or past movie_size. Version 2
// (needed for kIndexPending) carries the entries' CRC32C, so that a reader can tell an index it
// read while the server filled it in: decode_index then fails as inconsistent, with "torn" in its
// message (read it again).
std::vector<std::uint8_t> encode_index(const KeyframeIndex& index, std::uint8_t version = kLayoutVersion1);
Decoded<KeyframeIndex> decode_index(Bytes buf);

}  // namespace vod::proto
