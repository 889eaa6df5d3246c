// The catalog region: one RDMA-readable region per catalog generation listing every movie with its
// metadata and its descriptors. A client switches movie by reading another entry, without a message
// to the server. docs/protocol.md, "Catalog region".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vod/protocol/message_header.hpp"
#include "vod/protocol/region_descriptor.hpp"

namespace vod::proto {

inline constexpr std::uint32_t kCatalogMagic = 0x52564354;  // "RVCT"
inline constexpr std::size_t kCatalogNameMax = 128;

// Entry flags.
inline constexpr std::uint32_t kEntryIsMedia = 1u << 0;        // probed as audio/video
inline constexpr std::uint32_t kEntryHasIndex = 1u << 1;       // the index region holds keyframes
// A live channel: the movie region is its ring and the index region its 64-byte live header
// (WireLiveHeader); size is the ring's size, duration 0.
inline constexpr std::uint32_t kEntryLive = 1u << 2;
// The server binds a memory window per connection: this entry's descriptors carry rkey 0, and a
// client connects for the entry (by name) to get rkeys that work on that connection only.
inline constexpr std::uint32_t kEntryWindowed = 1u << 3;
// Version 2: the movie is served from the segment cache. Its movie descriptor is the arena (where
// slots are, not where the movie is), and `segments` describes its segment table (segment_table.hpp).
inline constexpr std::uint32_t kEntrySegmented = 1u << 4;
inline constexpr std::uint32_t kEntryKnownFlags = kEntryIsMedia | kEntryHasIndex | kEntryLive | kEntryWindowed | kEntrySegmented;

struct CatalogEntry {
  std::string name;  // 1..128 bytes, no '/', NUL or control characters, not "." or ".."
  std::uint64_t size = 0;
  std::uint64_t duration_us = 0;  // 0 when unknown (not media)
  std::uint64_t bitrate_bps = 0;  // average over the file; 0 when unknown
  RegionDescriptor movie;
  RegionDescriptor index;
  RegionDescriptor segments;  // version 2, segmented entries only: the segment table
  std::uint32_t flags = 0;
  std::uint16_t width = 0, height = 0;
  std::string container;    // short canonical name: "mp4", "mpegts", "matroska", "webm", "" for raw bytes
  std::string video_codec;  // e.g. "h264"
  std::string audio_codec;  // e.g. "aac"
  std::string mime_type;    // for HTTP Content-Type, e.g. "video/mp4"

  bool operator==(const CatalogEntry&) const = default;
};

struct Catalog {
  std::uint32_t generation = 0;
  std::vector<CatalogEntry> entries;

  const CatalogEntry* find(std::string_view name) const noexcept;
  const CatalogEntry* find_hash(std::uint64_t hash) const noexcept;
  bool operator==(const Catalog&) const = default;
};

struct WireCatalogHeader {
  be32 magic;
  std::uint8_t version;
  std::uint8_t reserved0;
  be16 header_length;  // 64 in v1; entries start here
  be32 generation;
  be32 entry_count;
  be32 entry_size;  // 320 in v1, 352 in v2; a larger size is a later revision with appended fields
  be32 reserved1;
  be64 region_length;  // header_length + entry_count * entry_size
  std::uint8_t reserved2[32];
};
static_assert(sizeof(WireCatalogHeader) == 64);

struct WireCatalogEntry {
  be64 name_hash;
  be64 size;
  be64 duration_us;
  be64 bitrate_bps;
  WireRegionDescriptor movie;
  WireRegionDescriptor index;
  be32 flags;
  be16 width;
  be16 height;
  char container[16];  // NUL-padded printable ASCII, as are the next three
  char video_codec[16];
  char audio_codec[16];
  char mime_type[48];
  be16 name_length;
  std::uint8_t reserved[6];
  char name[kCatalogNameMax];  // name_length bytes, zero-padded
};
static_assert(sizeof(WireCatalogEntry) == 320);

// Version 2's entry: version 1's, then the segment table's descriptor. A catalog is laid out in
// version 2 only when an entry is segmented, so a library served whole stays readable by version-1
// clients.
struct WireCatalogEntryV2 {
  WireCatalogEntry v1;
  WireRegionDescriptor segments;
  std::uint8_t reserved[8];
};
static_assert(sizeof(WireCatalogEntryV2) == 352);

// Why a name cannot be published, or nullptr when it can.
const char* invalid_name_reason(std::string_view name) noexcept;

// Encodes a catalog. Throws std::invalid_argument for a name that cannot be published or a
// metadata string too long for its field; callers validate names when they scan the media dir.
std::vector<std::uint8_t> encode_catalog(const Catalog& c);

// The header alone: a client that knows only the region's length reads the first 64 bytes, then
// region_length bytes.
struct CatalogHeaderInfo {
  std::uint32_t generation;
  std::uint32_t entry_count;
  std::uint64_t region_length;
};
Decoded<CatalogHeaderInfo> decode_catalog_header(Bytes buf);
Decoded<Catalog> decode_catalog(Bytes buf);

}  // namespace vod::proto
