// The catalog region: one RDMA-readable region per catalog generation listing every movie with its
// metadata and its descriptors. A client switches movie by reading another entry, without a message
// to the server. docs/protocol.md, "Catalog region".
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "vod/protocol/catalog_titles.hpp"
#include "vod/protocol/message_header.hpp"
#include "vod/protocol/region_descriptor.hpp"

namespace vod::proto {

inline constexpr std::uint32_t kCatalogMagic = 0x52564354;  // "RVCT"
// A movie's name is its path below the server's media directory, '/' between folders, in UTF-8:
// at most 1024 bytes, each folder or file name at most 255 (what Linux allows one). Names of up to
// 128 bytes without a '/' fit version 1's entry; the others need a version-3 catalog, which keeps
// longer names in a names area after the entries. Live channel names stay flat (128 bytes, no '/').
inline constexpr std::size_t kCatalogNameMax = 1024;
inline constexpr std::size_t kNameComponentMax = 255;
inline constexpr std::size_t kInlineNameMax = 128;  // the entry's own name field

// Entry flags.
inline constexpr std::uint32_t kEntryIsMedia = 1u << 0;   // probed as audio/video
inline constexpr std::uint32_t kEntryHasIndex = 1u << 1;  // the index region holds keyframes
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

// What the bytes of an entry are, equal on two servers exactly when the bytes are: a client resumes
// a read elsewhere (another member, a later generation) only onto the same identity.
// docs/protocol.md, "Content identity".
inline constexpr std::uint8_t kContentUnknown = 0;  // not computed yet (or a kind this client does not know)
// The first 16 bytes of SHA-256 over "rvod-content-v1" NUL, the size as 8 big-endian bytes, and the
// bytes a client reads (a remuxed movie's remux, not its file).
inline constexpr std::uint8_t kContentSha256 = 1;
// A movie of an HTTP origin (vod-server --origin): the first 16 bytes of SHA-256 over
// "rvod-origin-v1" NUL, the size as 8 big-endian bytes, the movie's name, NUL, and the origin's
// strong ETag of the object. Edges of one origin agree on it without reading the bytes.
inline constexpr std::uint8_t kContentOriginTag = 2;

struct ContentId {
  std::uint8_t kind = kContentUnknown;
  std::array<std::uint8_t, 16> digest{};

  bool known() const noexcept { return kind != kContentUnknown; }
  // Same bytes: both known, of one kind, with one digest. Unknown is never the same as anything.
  bool same(const ContentId& other) const noexcept { return known() && kind == other.kind && digest == other.digest; }
  std::string hex() const;  // "sha256:<32 hex digits>", or "unknown"
  bool operator==(const ContentId&) const = default;
};

struct CatalogEntry {
  std::string name;  // a path, as invalid_name_reason allows: "Films/Title (2024)/Title (2024).mkv"
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
  ContentId content;        // entries of 384 bytes or more; unknown in a live channel

  bool operator==(const CatalogEntry&) const = default;
};

struct Catalog {
  std::uint32_t generation = 0;
  std::vector<CatalogEntry> entries;
  // A random number a server process draws once (0: a server of the previous revision): with the
  // generation it names one version of every entry, so a client tells a restarted server's
  // generation 1 from the one it read.
  std::uint64_t instance = 0;
  // Version 4: the titles (catalog_titles.hpp), sorted by name. A catalog is laid out in version 4
  // only when it lists one, so a library without titles stays readable by version-3 clients.
  std::vector<Title> titles;

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
  be32 entry_size;     // at least 320 in v1, 352 in v2; written as 384 (the content identity appended)
  be32 names_length;   // version 3: bytes of the names area after the entries; 0 before
  be64 region_length;  // header_length + entry_count * entry_size + names_length + titles_length
  be64 instance;
  be32 titles_length;  // version 4: bytes of the titles area after the names area; 0 before
  // The server's status words (ServerStatus below): the only bytes of a catalog that change after it
  // is published. 0 from servers before them, and ignored by catalog decoders.
  be32 heartbeat;
  std::uint8_t server_state;
  std::uint8_t reserved2[15];
};
static_assert(sizeof(WireCatalogHeader) == 64);

// ------------------------------------------------------------------ the server's status words
//
// Bytes 44-51 of every catalog region the server still has registered: a heartbeat its event loop
// advances every kHeartbeatPeriod, and its state. A client in a fleet reads them one-sided every
// few hundred milliseconds: a heartbeat that stops means the process no longer serves (stopped, or
// its loop stuck) even while the NIC still answers Reads; `draining` means it is about to stop and
// its viewers should move to another member now. docs/protocol.md, "Server status".
inline constexpr std::size_t kServerStatusOffset = 44;
inline constexpr std::size_t kServerStatusLength = 8;
inline constexpr std::uint8_t kServerServing = 0;
inline constexpr std::uint8_t kServerDraining = 1;
inline constexpr std::uint8_t kMaxServerState = kServerDraining;
inline constexpr unsigned kHeartbeatPeriodMs = 100;  // how often a server advances its heartbeat

struct ServerStatus {
  std::uint32_t heartbeat = 0;  // 0: a server without status words (or one that has not ticked yet)
  bool draining = false;
  bool operator==(const ServerStatus&) const = default;
};

// The status from the kServerStatusLength bytes at kServerStatusOffset (more are ignored). A state
// this client does not know is an error, not a guess.
Decoded<ServerStatus> decode_server_status(Bytes buf);
// Writes `s` over the status words of a whole catalog region (at least the 64-byte header).
void write_server_status(std::span<std::uint8_t> catalog, const ServerStatus& s) noexcept;

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
  std::uint8_t reserved[2];
  be32 name_offset;           // version 3, names over 128 bytes: where in the region they are; else 0
  char name[kInlineNameMax];  // a name of up to 128 bytes, zero-padded; zeros when it is elsewhere
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

// The entry every encoder writes since the content identity (in both layout versions: in a version-1
// catalog the segment descriptor stays zero). Appended, so a client that knows only 320 or 352
// bytes skips the identity and reads the rest as before.
struct WireCatalogEntryV2Content {
  WireCatalogEntryV2 v2;
  std::uint8_t content_digest[16];
  std::uint8_t content_kind;  // kContentUnknown, kContentSha256 or kContentOriginTag; a later kind reads as unknown
  std::uint8_t reserved[15];
};
static_assert(sizeof(WireCatalogEntryV2Content) == 384);

// The length of the UTF-8 sequence at text[i], or 0 when it is not one (overlong forms, surrogates
// and code points past U+10FFFF included).
std::size_t utf8_sequence(std::string_view text, std::size_t i) noexcept;

// Whether `text` is UTF-8 without control characters (a track's name, a part of a movie name).
bool is_utf8_text(std::string_view text) noexcept;

// Whether a name needs a version-3 catalog: it has a '/' or is over 128 bytes.
bool needs_path_names(std::string_view name) noexcept;

// Why a movie name cannot be published, or nullptr when it can: a relative path of 1..1024 bytes
// of UTF-8 whose folders and file are 1..255 bytes each, none "." or "..", with no control
// characters (so no empty part, no leading, trailing or doubled '/').
const char* invalid_name_reason(std::string_view name) noexcept;
// A live channel's name: a movie name without '/', of at most 128 bytes.
const char* invalid_channel_name_reason(std::string_view name) noexcept;

// Encodes a catalog. Throws std::invalid_argument for a name that cannot be published or a
// metadata string too long for its field; callers validate names when they scan the media dir.
std::vector<std::uint8_t> encode_catalog(const Catalog& c);

// The header alone: a client that knows only the region's length reads the first 64 bytes, then
// region_length bytes.
struct CatalogHeaderInfo {
  std::uint32_t generation;
  std::uint32_t entry_count;
  std::uint64_t region_length;
  std::uint64_t titles_length = 0;  // the last bytes of the region
};
Decoded<CatalogHeaderInfo> decode_catalog_header(Bytes buf);
Decoded<Catalog> decode_catalog(Bytes buf);

}  // namespace vod::proto
