#include "vod/protocol/catalog_layout.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "decode_support.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::proto {

using detail::fail;
using detail::hex;
using detail::num;

namespace {

constexpr std::size_t kHeaderLength = sizeof(WireCatalogHeader);
constexpr std::size_t kEntrySize = sizeof(WireCatalogEntry);

template <std::size_t N>
void put_text(char (&field)[N], const std::string& value, const char* what) {
  if (value.size() >= N) throw std::invalid_argument(std::string("catalog: ") + what + " '" + value + "' exceeds " + num(N - 1) + " bytes");
  for (char ch : value) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c > 0x7e) throw std::invalid_argument(std::string("catalog: ") + what + " holds a non-printable byte");
  }
  std::copy(value.begin(), value.end(), field);
}

// An entry's name: inline, or (version 3, over 128 bytes) in the names area [names_from, end).
Decoded<std::string> entry_name(const WireCatalogEntry& w, std::uint8_t version, Bytes buf, std::uint64_t names_from, std::uint64_t end,
                                const std::string& where) {
  const std::size_t length = w.name_length.get();
  const std::size_t most = version >= kPathNamesVersion ? kCatalogNameMax : kInlineNameMax;
  if (length == 0 || length > most)
    return fail(DecodeFault::bad_field,
                where + ": name length " + num(length) + " outside 1.." + num(most) + " (layout version " + num(version) + ")");
  std::string name;
  const std::uint64_t offset = version >= kPathNamesVersion ? w.name_offset.get() : 0;  // reserved before: ignored
  if (length <= kInlineNameMax) {
    if (offset != 0) return fail(DecodeFault::inconsistent, where + ": a name of " + num(length) + " bytes has a names-area offset");
    name.assign(w.name, length);
  } else {
    if (offset < names_from || offset + length > end)
      return fail(DecodeFault::bad_field, where + ": name at " + num(offset) + ".." + num(offset + length) + " is outside the names area " +
                                              num(names_from) + ".." + num(end));
    name.assign(reinterpret_cast<const char*>(buf.data() + offset), length);
  }
  if (const char* why = invalid_name_reason(name)) return fail(DecodeFault::bad_field, where + ": " + why);
  if (version < kPathNamesVersion && needs_path_names(name))
    return fail(DecodeFault::bad_field, where + ": a name with '/' in a catalog of layout version " + num(version));
  return name;
}

}  // namespace

const CatalogEntry* Catalog::find(std::string_view name) const noexcept {
  auto it = std::find_if(entries.begin(), entries.end(), [&](const CatalogEntry& e) { return e.name == name; });
  return it == entries.end() ? nullptr : &*it;
}

const CatalogEntry* Catalog::find_hash(std::uint64_t hash) const noexcept {
  auto it = std::find_if(entries.begin(), entries.end(), [&](const CatalogEntry& e) { return name_hash(e.name) == hash; });
  return it == entries.end() ? nullptr : &*it;
}

std::string ContentId::hex() const {
  if (!known()) return "unknown";
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = kind == kContentSha256 ? "sha256:" : kind == kContentOriginTag ? "origin-etag:" : "kind" + num(kind) + ":";
  for (std::uint8_t b : digest) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

// Written out: the check is a few lines, and no library of the project's set has one that works on
// a string_view without a locale.
std::size_t utf8_sequence(std::string_view s, std::size_t i) noexcept {
  const auto at = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = at(i);
  if (c < 0x80) return 1;
  std::size_t n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (n == 0 || c > 0xf4 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((at(i + k) & 0xc0) != 0x80) return 0;
  const unsigned char d = at(i + 1);
  if ((c == 0xe0 && d < 0xa0) || (c == 0xed && d > 0x9f) || (c == 0xf0 && d < 0x90) || (c == 0xf4 && d > 0x8f)) return 0;
  return n;
}

bool is_utf8_text(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) return false;
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence(text, i);
      if (n == 0) return false;
      i += n - 1;
    }
  }
  return true;
}

bool needs_path_names(std::string_view name) noexcept { return name.size() > kInlineNameMax || name.find('/') != name.npos; }

const char* invalid_name_reason(std::string_view name) noexcept {
  if (name.empty()) return "the name is empty";
  if (name.size() > kCatalogNameMax) return "the name is longer than 1024 bytes";
  if (name.front() == '/') return "the name starts with '/'";
  if (name.back() == '/') return "the name ends with '/'";
  std::size_t part = 0;  // where the current folder or file name starts
  for (std::size_t i = 0; i <= name.size(); ++i) {
    if (i == name.size() || name[i] == '/') {
      const std::string_view p = name.substr(part, i - part);
      if (p.empty()) return "the name holds an empty folder name ('//')";
      if (p == "." || p == "..") return "the name holds a '.' or '..' part";
      if (p.size() > kNameComponentMax) return "a folder or file name in it is longer than 255 bytes";
      part = i + 1;
      continue;
    }
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) return "the name contains a control character";
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence(name, i);
      if (n == 0) return "the name is not UTF-8";
      i += n - 1;
    }
  }
  return nullptr;
}

const char* invalid_channel_name_reason(std::string_view name) noexcept {
  if (name.find('/') != name.npos) return "a channel name contains no '/'";
  if (name.size() > kInlineNameMax) return "a channel name is at most 128 bytes";
  return invalid_name_reason(name);
}

std::vector<std::uint8_t> encode_catalog(const Catalog& c) {
  const bool v2 = std::any_of(c.entries.begin(), c.entries.end(), [](const CatalogEntry& e) { return (e.flags & kEntrySegmented) != 0; });
  const bool v3 = std::any_of(c.entries.begin(), c.entries.end(), [](const CatalogEntry& e) { return needs_path_names(e.name); });
  const std::size_t entry_size = sizeof(WireCatalogEntryV2Content);
  const std::size_t names_at = kHeaderLength + c.entries.size() * entry_size;
  std::size_t names_length = 0;
  for (const CatalogEntry& e : c.entries)
    if (e.name.size() > kInlineNameMax) names_length += e.name.size();
  const std::vector<std::uint8_t> titles = c.titles.empty() ? std::vector<std::uint8_t>{} : encode_titles(c.titles, c.entries.size());
  for (const Title& t : c.titles) {
    for (const TitleRendition& r : t.renditions)
      if (c.entries[r.entry].flags & kEntryLive) throw std::invalid_argument("catalog: title '" + t.name + "' names a live channel");
    for (const TitleTrack& k : t.tracks)
      if (c.entries[k.entry].flags & kEntryLive) throw std::invalid_argument("catalog: title '" + t.name + "' names a live channel");
  }
  std::vector<std::uint8_t> out(names_at + names_length + titles.size());
  std::copy(titles.begin(), titles.end(), out.begin() + static_cast<std::ptrdiff_t>(names_at + names_length));

  WireCatalogHeader h{};
  h.magic = kCatalogMagic;
  h.version = !c.titles.empty() ? kTitlesVersion : v3 ? kPathNamesVersion : v2 ? kSegmentsVersion : kLayoutVersion1;
  h.header_length = static_cast<std::uint16_t>(kHeaderLength);
  h.generation = c.generation;
  h.entry_count = static_cast<std::uint32_t>(c.entries.size());
  h.entry_size = static_cast<std::uint32_t>(entry_size);
  h.names_length = static_cast<std::uint32_t>(names_length);
  h.titles_length = static_cast<std::uint32_t>(titles.size());
  h.region_length = out.size();
  h.instance = c.instance;
  store_wire(out.data(), h);

  std::size_t at = kHeaderLength, name_at = names_at;
  for (const CatalogEntry& e : c.entries) {
    if (const char* why = invalid_name_reason(e.name)) throw std::invalid_argument("catalog: cannot publish '" + e.name + "': " + why);
    if (e.flags & ~kEntryKnownFlags) throw std::invalid_argument("catalog: entry '" + e.name + "' has undefined flags");
    if (e.flags & kEntryLive)
      if (const char* why = invalid_channel_name_reason(e.name))
        throw std::invalid_argument("catalog: cannot publish the live channel '" + e.name + "': " + why);
    WireCatalogEntry w{};
    w.name_hash = name_hash(e.name);
    w.size = e.size;
    w.duration_us = e.duration_us;
    w.bitrate_bps = e.bitrate_bps;
    w.movie = to_wire(e.movie);
    w.index = to_wire(e.index);
    w.flags = e.flags;
    w.width = e.width;
    w.height = e.height;
    put_text(w.container, e.container, "container");
    put_text(w.video_codec, e.video_codec, "video codec");
    put_text(w.audio_codec, e.audio_codec, "audio codec");
    put_text(w.mime_type, e.mime_type, "MIME type");
    w.name_length = static_cast<std::uint16_t>(e.name.size());
    if (e.name.size() <= kInlineNameMax) {
      std::copy(e.name.begin(), e.name.end(), w.name);
    } else {
      w.name_offset = static_cast<std::uint32_t>(name_at);
      std::copy(e.name.begin(), e.name.end(), out.begin() + static_cast<std::ptrdiff_t>(name_at));
      name_at += e.name.size();
    }
    if (((e.flags & kEntrySegmented) != 0) == e.segments.empty())
      throw std::invalid_argument("catalog: entry '" + e.name + "' must have a segment table exactly when it is segmented");
    WireCatalogEntryV2Content w3{};
    w3.v2.v1 = w;
    if (v2) w3.v2.segments = to_wire(e.segments);
    w3.content_kind = e.content.kind;
    std::copy(e.content.digest.begin(), e.content.digest.end(), w3.content_digest);
    store_wire(out.data() + at, w3);
    at += entry_size;
  }
  return out;
}

Decoded<ServerStatus> decode_server_status(Bytes buf) {
  if (buf.size() < kServerStatusOffset + kServerStatusLength && buf.size() != kServerStatusLength)
    return fail(DecodeFault::truncated, "server status: " + num(buf.size()) + " bytes, fewer than its 8");
  // Either the words alone (what a client's probe reads) or a catalog from its start.
  const std::uint8_t* at = buf.size() == kServerStatusLength ? buf.data() : buf.data() + kServerStatusOffset;
  const std::uint8_t state = at[4];
  if (state > kMaxServerState) return fail(DecodeFault::bad_field, "server status: state " + num(state) + " is not one this client knows");
  return ServerStatus{load_wire<be32>(at).get(), state == kServerDraining};
}

void write_server_status(std::span<std::uint8_t> catalog, const ServerStatus& s) noexcept {
  if (catalog.size() < kHeaderLength) return;
  std::uint8_t* at = catalog.data() + kServerStatusOffset;
  store_wire(at, be32(s.heartbeat));
  at[4] = s.draining ? kServerDraining : kServerServing;
}

Decoded<CatalogHeaderInfo> decode_catalog_header(Bytes buf) {
  if (buf.size() < kHeaderLength)
    return fail(DecodeFault::truncated, "catalog: " + num(buf.size()) + " bytes, fewer than the 64-byte header");
  const auto h = load_wire<WireCatalogHeader>(buf.data());
  if (h.magic.get() != kCatalogMagic)
    return fail(DecodeFault::bad_magic, "catalog: magic " + hex(h.magic.get()) + " is not " + hex(kCatalogMagic));
  if (h.version < kMinProtocolVersion || h.version > kProtocolVersion)
    return fail(DecodeFault::unsupported_version, "catalog: layout version " + num(h.version) + " not supported");
  const std::uint64_t header_length = h.header_length.get();
  const std::uint64_t entry_size = h.entry_size.get();
  const std::uint64_t count = h.entry_count.get();
  const std::uint64_t names_length = h.version >= kPathNamesVersion ? h.names_length.get() : 0;
  if (header_length < kHeaderLength) return fail(DecodeFault::bad_length, "catalog: header length " + num(header_length) + " below 64");
  const std::uint64_t least = h.version >= kSegmentsVersion ? sizeof(WireCatalogEntryV2) : kEntrySize;
  if (entry_size < least)
    return fail(DecodeFault::bad_length,
                "catalog: entry size " + num(entry_size) + " below layout version " + num(h.version) + "'s " + num(least));
  if (h.generation.get() == 0) return fail(DecodeFault::bad_field, "catalog: generation 0 is reserved");
  if (names_length > count * kCatalogNameMax)
    return fail(DecodeFault::bad_length, "catalog: a names area of " + num(names_length) + " bytes for " + num(count) + " entries");
  const std::uint64_t titles_length = h.version >= kTitlesVersion ? h.titles_length.get() : 0;  // reserved before: ignored
  if (h.version >= kTitlesVersion && titles_length == 0)
    return fail(DecodeFault::inconsistent, "catalog: layout version 4 without a titles area");
  // entry_size < 2^32 and count < 2^32, so the product fits in 64 bits.
  const std::uint64_t expected = header_length + count * entry_size + names_length + titles_length;
  if (h.region_length.get() != expected)
    return fail(DecodeFault::inconsistent, "catalog: region length " + num(h.region_length.get()) + " but header " + num(header_length) +
                                               " + " + num(count) + " entries of " + num(entry_size) + " bytes + names " +
                                               num(names_length) + " + titles " + num(titles_length) + " make " + num(expected));
  return CatalogHeaderInfo{h.generation.get(), static_cast<std::uint32_t>(count), expected, titles_length};
}

Decoded<Catalog> decode_catalog(Bytes buf) {
  auto info = decode_catalog_header(buf);
  if (!info) return info.error();
  if (info->region_length > buf.size())
    return fail(DecodeFault::truncated,
                "catalog: region length " + num(info->region_length) + " but only " + num(buf.size()) + " bytes were read");
  const auto h = load_wire<WireCatalogHeader>(buf.data());
  const std::size_t header_length = h.header_length.get();
  const std::size_t entry_size = h.entry_size.get();
  const std::uint64_t names_from = header_length + std::uint64_t{info->entry_count} * entry_size;
  const std::uint64_t titles_from = info->region_length - info->titles_length;

  Catalog c;
  c.generation = info->generation;
  c.instance = h.instance.get();
  c.entries.reserve(info->entry_count);
  std::unordered_set<std::uint64_t> hashes;
  for (std::size_t i = 0; i < info->entry_count; ++i) {
    const auto w = load_wire<WireCatalogEntry>(buf.data() + header_length + i * entry_size);
    const std::string where = "catalog entry " + num(i);
    CatalogEntry e;
    auto name = entry_name(w, h.version, buf, names_from, titles_from, where);
    if (!name) return name.error();
    e.name = std::move(*name);
    if (w.name_hash.get() != name_hash(e.name))
      return fail(DecodeFault::inconsistent, where + ": name hash " + hex(w.name_hash.get()) + " does not match '" + e.name + "'");
    if (!hashes.insert(w.name_hash.get()).second)
      return fail(DecodeFault::inconsistent, where + ": name hash of '" + e.name + "' repeats an earlier entry");
    e.size = w.size.get();
    e.duration_us = w.duration_us.get();
    e.bitrate_bps = w.bitrate_bps.get();
    auto movie = from_wire(w.movie, where + " movie descriptor");
    if (!movie) return movie.error();
    auto index = from_wire(w.index, where + " index descriptor");
    if (!index) return index.error();
    e.movie = *movie;
    e.index = *index;
    e.flags = w.flags.get();
    if (h.version >= kSegmentsVersion) {
      auto segments = from_wire(load_wire<WireCatalogEntryV2>(buf.data() + header_length + i * entry_size).segments,
                                where + " segment table descriptor");
      if (!segments) return segments.error();
      e.segments = *segments;
    }
    if (e.flags & kEntrySegmented) {
      if (e.segments.length < 64 || (e.flags & kEntryLive))
        return fail(DecodeFault::inconsistent, where + ": a segmented movie needs a segment table of at least 64 bytes and cannot be live");
      if (e.movie.empty() && e.size != 0) return fail(DecodeFault::inconsistent, where + ": a segmented movie without an arena descriptor");
    } else {
      if (!e.segments.empty()) return fail(DecodeFault::inconsistent, where + ": a segment table on an entry that is not segmented");
      if (e.movie.length != e.size)
        return fail(DecodeFault::inconsistent, where + ": size " + num(e.size) + " but movie region of " + num(e.movie.length) + " bytes");
    }
    if (e.flags & ~kEntryKnownFlags) return fail(DecodeFault::bad_field, where + ": undefined flags " + hex(e.flags & ~kEntryKnownFlags));
    if ((e.flags & kEntryHasIndex) && e.index.length < 32)
      return fail(DecodeFault::inconsistent, where + ": has-index flag with an index region of " + num(e.index.length) + " bytes");
    if (e.flags & kEntryLive)
      if (const char* why = invalid_channel_name_reason(e.name)) return fail(DecodeFault::bad_field, where + ": " + why);
    if ((e.flags & kEntryLive) && ((e.flags & kEntryHasIndex) || e.index.length < 64 || e.size == 0 || e.duration_us != 0))
      return fail(DecodeFault::inconsistent,
                  where + ": a live channel needs a ring, a 64-byte live header and no keyframe index or duration");
    if (entry_size >= sizeof(WireCatalogEntryV2Content)) {
      const auto w3 = load_wire<WireCatalogEntryV2Content>(buf.data() + header_length + i * entry_size);
      if (w3.content_kind == kContentSha256 || w3.content_kind == kContentOriginTag) {
        e.content.kind = w3.content_kind;
        std::copy(std::begin(w3.content_digest), std::end(w3.content_digest), e.content.digest.begin());
      }  // a kind this client does not know: unknown, so never the same as anything
    }
    e.width = w.width.get();
    e.height = w.height.get();
    auto container = detail::fixed_text(w.container);
    auto video = detail::fixed_text(w.video_codec);
    auto audio = detail::fixed_text(w.audio_codec);
    auto mime = detail::fixed_text(w.mime_type);
    if (!container || !video || !audio || !mime)
      return fail(DecodeFault::bad_field, where + ": a metadata string is unterminated or holds a non-printable byte");
    e.container = *container;
    e.video_codec = *video;
    e.audio_codec = *audio;
    e.mime_type = *mime;
    c.entries.push_back(std::move(e));
  }
  if (info->titles_length) {
    auto titles = decode_titles(buf.subspan(titles_from, info->titles_length), c.entries.size());
    if (!titles) return titles.error();
    for (const Title& t : *titles) {
      const auto live = [&](std::uint32_t entry) { return (c.entries[entry].flags & kEntryLive) != 0; };
      if (std::any_of(t.renditions.begin(), t.renditions.end(), [&](const TitleRendition& r) { return live(r.entry); }) ||
          std::any_of(t.tracks.begin(), t.tracks.end(), [&](const TitleTrack& k) { return live(k.entry); }))
        return fail(DecodeFault::inconsistent, "catalog: title '" + t.name + "' names a live channel");
    }
    c.titles = std::move(*titles);
  }
  return c;
}

}  // namespace vod::proto
