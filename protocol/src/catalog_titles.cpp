// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/protocol/catalog_titles.hpp"

#include <algorithm>
#include <stdexcept>

#include "decode_support.hpp"
#include "vod/protocol/catalog_layout.hpp"

namespace vod::proto {

using detail::fail;
using detail::num;

namespace {

// A NUL-padded field of printable ASCII (or, with `utf8`, UTF-8 text) of at most N - 1 bytes.
template <std::size_t N>
void put_field(char (&field)[N], const std::string& value, bool utf8, const char* what) {
  const bool ok = utf8 ? is_utf8_text(value) : std::all_of(value.begin(), value.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
  if (value.size() >= N || !ok)
    throw std::invalid_argument(std::string("titles: ") + what + " '" + value + "' is over " + num(N - 1) +
                                " bytes or holds a byte it may not");
  std::copy(value.begin(), value.end(), field);
}

template <std::size_t N>
std::optional<std::string> get_field(const char (&field)[N], bool utf8) {
  if (!utf8) return detail::fixed_text(field);
  const auto end = std::find(field, field + N, '\0');
  if (end == field + N) return std::nullopt;
  std::string out(field, end);
  if (!is_utf8_text(out)) return std::nullopt;
  return out;
}

bool is_tag_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// The rules both sides keep: what encode_titles refuses and decode_titles reports.
const char* invalid_title_reason(const Title& t, std::size_t entry_count) {
  if (const char* why = invalid_name_reason(t.name)) return why;
  if (t.renditions.empty() || t.renditions.size() > kTitleRenditionsMax) return "a title has 1..32 renditions";
  if (t.tracks.size() > kTitleTracksMax) return "a title has at most 64 tracks";
  for (const auto& r : t.renditions) {
    if (r.entry >= entry_count) return "a rendition names an entry past the catalog";
    if (r.label.empty()) return "a rendition has no label";
    if ((r.frame_rate_num == 0) != (r.frame_rate_den == 0)) return "a frame rate is half known";
  }
  for (std::size_t i = 0; i < t.renditions.size(); ++i)
    for (std::size_t k = 0; k < i; ++k)
      if (t.renditions[i].entry == t.renditions[k].entry || t.renditions[i].label == t.renditions[k].label)
        return "two renditions share an entry or a label";
  for (const auto& k : t.tracks) {
    if (k.kind != TrackKind::audio && k.kind != TrackKind::subtitles) return "a track of an unknown kind";
    if (k.entry >= entry_count) return "a track names an entry past the catalog";
    if (k.rendition != kAllRenditions &&
        std::none_of(t.renditions.begin(), t.renditions.end(), [&](const TitleRendition& r) { return r.entry == k.rendition; }))
      return "a track names a rendition the title does not have";
    if (k.kind == TrackKind::audio && k.stream == kWholeFile) return "an audio track is a stream of a rendition";
    if (!k.language.empty())
      if (const char* why = invalid_language_reason(k.language)) return why;
  }
  return nullptr;
}

}  // namespace

std::uint64_t frame_duration_us(std::uint32_t num, std::uint32_t den) noexcept {
  return num && den ? 1'000'000ull * den / num : 1'000'000ull / 24;
}

std::uint64_t alignment_tolerance_us(const TitleRendition& first, const TitleRendition& r) noexcept {
  return std::max(frame_duration_us(first.frame_rate_num, first.frame_rate_den), frame_duration_us(r.frame_rate_num, r.frame_rate_den));
}

const Title* find_title(const std::vector<Title>& titles, const std::string& name) noexcept {
  const auto it = std::lower_bound(titles.begin(), titles.end(), name, [](const Title& t, const std::string& n) { return t.name < n; });
  return it != titles.end() && it->name == name ? &*it : nullptr;
}

const Title* title_of_rendition(const std::vector<Title>& titles, std::uint32_t entry) noexcept {
  for (const Title& t : titles)
    for (const TitleRendition& r : t.renditions)
      if (r.entry == entry) return &t;
  return nullptr;
}

const char* invalid_language_reason(const std::string& tag) noexcept {
  if (tag.size() < 2 || tag.size() > kLanguageTagMax) return "a language tag is 2..15 bytes";
  std::size_t first = 0;
  while (first < tag.size() && tag[first] != '-') {
    const char c = tag[first];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return "a language tag starts with letters";
    ++first;
  }
  if (first < 2 || first > 3) return "a language tag starts with a 2- or 3-letter language";
  std::size_t run = 0;
  for (std::size_t i = first; i < tag.size(); ++i) {
    if (tag[i] == '-') {
      if (i > first && run == 0) return "a language tag has an empty subtag";
      run = 0;
    } else if (is_tag_char(tag[i])) {
      ++run;
    } else {
      return "a language tag holds a byte other than letters, digits and '-'";
    }
  }
  if (tag.back() == '-') return "a language tag has an empty subtag";
  return nullptr;
}

std::vector<std::uint8_t> encode_titles(const std::vector<Title>& titles, std::size_t entry_count) {
  std::size_t renditions = 0, tracks = 0, text = 0;
  for (std::size_t i = 0; i < titles.size(); ++i) {
    if (const char* why = invalid_title_reason(titles[i], entry_count))
      throw std::invalid_argument("titles: cannot publish '" + titles[i].name + "': " + why);
    if (i > 0 && !(titles[i - 1].name < titles[i].name)) throw std::invalid_argument("titles: not sorted by name, or a name twice");
    renditions += titles[i].renditions.size();
    tracks += titles[i].tracks.size();
    text += titles[i].name.size();
  }
  const std::size_t titles_at = sizeof(WireTitlesHeader), renditions_at = titles_at + titles.size() * sizeof(WireTitle),
                    tracks_at = renditions_at + renditions * sizeof(WireTitleRendition),
                    text_at = tracks_at + tracks * sizeof(WireTitleTrack);
  std::vector<std::uint8_t> out(text_at + text);
  WireTitlesHeader h{};
  h.title_count = static_cast<std::uint32_t>(titles.size());
  h.rendition_count = static_cast<std::uint32_t>(renditions);
  h.track_count = static_cast<std::uint32_t>(tracks);
  h.text_length = static_cast<std::uint32_t>(text);
  store_wire(out.data(), h);
  std::size_t r = 0, k = 0, at = text_at;
  for (std::size_t i = 0; i < titles.size(); ++i) {
    const Title& t = titles[i];
    WireTitle w{};
    w.name_offset = static_cast<std::uint32_t>(at);
    w.name_length = static_cast<std::uint16_t>(t.name.size());
    w.first_rendition = static_cast<std::uint32_t>(r);
    w.rendition_count = static_cast<std::uint16_t>(t.renditions.size());
    w.first_track = static_cast<std::uint32_t>(k);
    w.track_count = static_cast<std::uint16_t>(t.tracks.size());
    store_wire(out.data() + titles_at + i * sizeof(WireTitle), w);
    std::copy(t.name.begin(), t.name.end(), out.begin() + static_cast<std::ptrdiff_t>(at));
    at += t.name.size();
    for (const auto& x : t.renditions) {
      WireTitleRendition wr{};
      wr.entry = x.entry;
      wr.frame_rate_num = x.frame_rate_num;
      wr.frame_rate_den = x.frame_rate_den;
      put_field(wr.label, x.label, false, "label");
      store_wire(out.data() + renditions_at + r++ * sizeof(WireTitleRendition), wr);
    }
    for (const auto& x : t.tracks) {
      WireTitleTrack wt{};
      wt.kind = static_cast<std::uint8_t>(x.kind);
      wt.flags = x.is_default ? 1 : 0;
      wt.stream = x.stream;
      wt.channels = x.channels;
      wt.entry = x.entry;
      wt.rendition = x.rendition;
      put_field(wt.language, x.language, false, "language");
      put_field(wt.codec, x.codec, false, "codec");
      put_field(wt.name, x.name, true, "track name");
      store_wire(out.data() + tracks_at + k++ * sizeof(WireTitleTrack), wt);
    }
  }
  return out;
}

Decoded<std::vector<Title>> decode_titles(Bytes area, std::size_t entry_count) {
  if (area.size() < sizeof(WireTitlesHeader))
    return fail(DecodeFault::truncated, "titles: " + num(area.size()) + " bytes, fewer than the header's 16");
  const auto h = load_wire<WireTitlesHeader>(area.data());
  const std::uint64_t count = h.title_count.get(), renditions = h.rendition_count.get(), tracks = h.track_count.get();
  const std::uint64_t text = h.text_length.get();
  const std::uint64_t renditions_at = sizeof(WireTitlesHeader) + count * sizeof(WireTitle);
  const std::uint64_t tracks_at = renditions_at + renditions * sizeof(WireTitleRendition);
  const std::uint64_t text_at = tracks_at + tracks * sizeof(WireTitleTrack);
  if (text_at + text != area.size())  // each count < 2^32 times a size < 2^7: no overflow
    return fail(DecodeFault::inconsistent, "titles: " + num(count) + " titles, " + num(renditions) + " renditions, " + num(tracks) +
                                               " tracks and " + num(text) + " bytes of names do not make the area's " + num(area.size()));
  std::vector<Title> out;
  out.reserve(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto w = load_wire<WireTitle>(area.data() + sizeof(WireTitlesHeader) + i * sizeof(WireTitle));
    const std::string where = "title " + num(i);
    Title t;
    const std::uint64_t name_at = w.name_offset.get(), name_length = w.name_length.get();
    if (name_at < text_at || name_at + name_length > area.size())
      return fail(DecodeFault::bad_field, where + ": its name is outside the names");
    t.name.assign(reinterpret_cast<const char*>(area.data() + name_at), name_length);
    const std::uint64_t first_r = w.first_rendition.get(), first_k = w.first_track.get();
    if (first_r + w.rendition_count.get() > renditions || first_k + w.track_count.get() > tracks)
      return fail(DecodeFault::bad_field, where + ": its renditions or tracks run past the area's");
    for (std::uint64_t r = first_r; r < first_r + w.rendition_count.get(); ++r) {
      const auto wr = load_wire<WireTitleRendition>(area.data() + renditions_at + r * sizeof(WireTitleRendition));
      auto label = get_field(wr.label, false);
      if (!label) return fail(DecodeFault::bad_field, where + ": a label is unterminated or not printable");
      t.renditions.push_back({wr.entry.get(), std::move(*label), wr.frame_rate_num.get(), wr.frame_rate_den.get()});
    }
    for (std::uint64_t k = first_k; k < first_k + w.track_count.get(); ++k) {
      const auto wt = load_wire<WireTitleTrack>(area.data() + tracks_at + k * sizeof(WireTitleTrack));
      auto language = get_field(wt.language, false);
      auto codec = get_field(wt.codec, false);
      auto name = get_field(wt.name, true);
      if (!language || !codec || !name) return fail(DecodeFault::bad_field, where + ": a track's text is unterminated or not text");
      TitleTrack x;
      x.kind = static_cast<TrackKind>(wt.kind);
      x.is_default = (wt.flags & 1) != 0;
      x.language = std::move(*language);
      x.codec = std::move(*codec);
      x.name = std::move(*name);
      x.entry = wt.entry.get();
      x.stream = wt.stream.get();
      x.channels = wt.channels.get();
      x.rendition = wt.rendition.get();
      t.tracks.push_back(std::move(x));
    }
    if (const char* why = invalid_title_reason(t, entry_count)) return fail(DecodeFault::bad_field, where + " '" + t.name + "': " + why);
    if (!out.empty() && !(out.back().name < t.name))
      return fail(DecodeFault::inconsistent, where + ": titles are not sorted by name, or one repeats");
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace vod::proto
