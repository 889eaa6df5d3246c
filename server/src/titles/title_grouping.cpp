// SPDX-License-Identifier: LGPL-2.1-or-later
#include "title_grouping.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

#include "language_tags.hpp"

namespace vod::server::titles {

namespace {

struct Split {
  std::string folder, base;  // "Films/X (2024)", "X (2024) - 720p.mp4"
};

Split split(const std::string& name) {
  const std::size_t slash = name.rfind('/');
  if (slash == std::string::npos) return {"", name};
  return {name.substr(0, slash), name.substr(slash + 1)};
}

std::string folder_name(const std::string& folder) { return folder.substr(folder.rfind('/') + 1); }

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string seconds(std::uint64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f s", static_cast<double>(us) / 1e6);
  return buf;
}

// A label is printable ASCII of at most 31 bytes without '.', so "NAME - 720p.en.srt" splits one way.
bool valid_label(const std::string& label) {
  return !label.empty() && label.size() <= proto::kTitleLabelMax && label.front() != ' ' && label.back() != ' ' &&
         std::all_of(label.begin(), label.end(), [](char c) { return c >= 0x20 && c <= 0x7e && c != '.'; });
}

std::uint64_t frame_us(const EntryFacts& e) { return proto::frame_duration_us(e.frame_rate_num, e.frame_rate_den); }

proto::TitleTrack stream_track(const media::StreamTrack& s, std::uint32_t entry) {
  proto::TitleTrack t;
  t.kind = s.kind == media::StreamTrack::Kind::audio ? proto::TrackKind::audio : proto::TrackKind::subtitles;
  t.is_default = s.is_default;
  t.language = normalize_language(s.language).value_or("");
  t.codec = s.codec.substr(0, proto::kTrackCodecMax);
  if (s.title.size() <= proto::kTrackNameMax && proto::is_utf8_text(s.title)) t.name = s.title;
  t.entry = entry;
  t.stream = static_cast<std::uint16_t>(s.stream);
  t.channels = static_cast<std::uint16_t>(std::min(s.channels, 0xffffu));
  return t;
}

struct Folder {
  std::vector<std::pair<std::string, const EntryFacts*>> renditions;  // label, entry
  std::vector<std::pair<std::string, const EntryFacts*>> sidecars;    // the part between NAME and ".srt": "", " - 720p"; then .LANG
};

}  // namespace

bool could_be_in_title(const std::string& name) {
  const Split s = split(name);
  return !s.folder.empty() && s.base.compare(0, folder_name(s.folder).size(), folder_name(s.folder)) == 0;
}

std::optional<std::string> misalignment(const EntryFacts& a, const EntryFacts& b, std::uint64_t tolerance_us) {
  const auto& x = a.keyframes_us;
  const auto& y = b.keyframes_us;
  const std::size_t n = std::min(x.size(), y.size());
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t d = x[i] > y[i] ? x[i] - y[i] : y[i] - x[i];
    if (d > tolerance_us)
      return "keyframe " + std::to_string(i) + " is at " + seconds(x[i]) + " in '" + split(a.name).base + "' but " + seconds(y[i]) +
             " in '" + split(b.name).base + "'";
  }
  if (x.size() != y.size())
    return "'" + split(a.name).base + "' has " + std::to_string(x.size()) + " keyframes and '" + split(b.name).base + "' " +
           std::to_string(y.size()) + "; the first unmatched is keyframe " + std::to_string(n);
  return std::nullopt;
}

Grouping group_titles(std::span<const EntryFacts> entries) {
  // Files by folder, sorted by name (a std::map), so titles come out sorted.
  std::map<std::string, Folder> folders;
  for (const EntryFacts& e : entries) {
    if (!could_be_in_title(e.name)) continue;
    const Split s = split(e.name);
    const std::string title = folder_name(s.folder);
    const std::string rest = s.base.substr(title.size());  // " - 720p.mp4", ".en.srt", " - 720p.en.srt"
    if (ends_with(rest, ".srt") || ends_with(rest, ".vtt")) {
      folders[s.folder].sidecars.push_back({rest.substr(0, rest.size() - 4), &e});
    } else if (rest.compare(0, 3, " - ") == 0 && e.is_media) {
      const std::size_t dot = rest.rfind('.');
      if (dot == std::string::npos || dot <= 3) continue;
      const std::string label = rest.substr(3, dot - 3);
      if (valid_label(label)) folders[s.folder].renditions.push_back({label, &e});
    }
  }
  Grouping out;
  for (auto& [path, f] : folders) {
    if (f.renditions.empty() || proto::invalid_name_reason(path) || f.renditions.size() > proto::kTitleRenditionsMax) continue;
    std::stable_sort(f.renditions.begin(), f.renditions.end(), [](const auto& a, const auto& b) {
      return a.second->bitrate_bps != b.second->bitrate_bps ? a.second->bitrate_bps > b.second->bitrate_bps : a.first < b.first;
    });
    const EntryFacts& top = *f.renditions.front().second;
    std::string why;
    for (const auto& [label, e] : f.renditions) {
      if (!e->indexed) {
        why = "'" + split(e->name).base + "' is not indexed yet";
        break;
      }
      if (e->keyframes_us.empty()) {
        why = "'" + split(e->name).base + "' has no video keyframes";
        break;
      }
      if (auto differs = misalignment(top, *e, std::max(frame_us(top), frame_us(*e)))) {
        why = "keyframes are not aligned: " + *differs;
        break;
      }
    }
    if (!why.empty()) {
      out.refused.push_back({path, why});
      continue;
    }
    proto::Title t;
    t.name = path;
    for (const auto& [label, e] : f.renditions) t.renditions.push_back({e->entry, label, e->frame_rate_num, e->frame_rate_den});
    for (const auto& s : top.tracks)
      if (s.kind == media::StreamTrack::Kind::audio) t.tracks.push_back(stream_track(s, top.entry));
    for (const auto& s : top.tracks)
      if (s.kind == media::StreamTrack::Kind::subtitles && s.text) t.tracks.push_back(stream_track(s, top.entry));
    std::sort(f.sidecars.begin(), f.sidecars.end(), [](const auto& a, const auto& b) { return a.second->name < b.second->name; });
    for (const auto& [middle, e] : f.sidecars) {
      // middle: ".LANG" (the title's) or " - LABEL.LANG" (one rendition's), perhaps with a flag
      // after the language that players' conventions add (".en.sdh", ".de.forced")
      std::string_view m = middle;
      for (std::string_view flag : {".forced", ".sdh", ".cc", ".default"})
        if (m.size() > flag.size() && m.substr(m.size() - flag.size()) == flag) m.remove_suffix(flag.size());
      const std::size_t dot = m.rfind('.');
      if (dot == std::string::npos) continue;
      const auto language = normalize_language(m.substr(dot + 1));
      if (!language) continue;
      std::uint32_t rendition = proto::kAllRenditions;
      if (dot > 0) {
        if (m.substr(0, 3) != " - ") continue;
        const std::string label(m.substr(3, dot - 3));
        auto r = std::find_if(f.renditions.begin(), f.renditions.end(), [&](const auto& x) { return x.first == label; });
        if (r == f.renditions.end()) continue;
        rendition = r->second->entry;
      }
      proto::TitleTrack k;
      k.kind = proto::TrackKind::subtitles;
      k.language = *language;
      k.codec = ends_with(e->name, ".vtt") ? "webvtt" : "subrip";
      k.entry = e->entry;
      k.rendition = rendition;
      t.tracks.push_back(std::move(k));
    }
    if (t.tracks.size() > proto::kTitleTracksMax) t.tracks.resize(proto::kTitleTracksMax);
    out.titles.push_back(std::move(t));
  }
  return out;
}

}  // namespace vod::server::titles
