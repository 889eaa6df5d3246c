// SPDX-License-Identifier: LGPL-2.1-or-later
// Which movies of a library are the renditions of one title: a pure decider over the catalog's
// names and what the probe and the keyframe indexes say, table-tested (tests/unit/title_grouping_test.cpp).
//
// The convention is Jellyfin's and Plex's "multiple versions": in a folder NAME/, the files
// "NAME - LABEL.ext" are renditions of the title named by the folder's path; "NAME.LANG.srt" or
// ".vtt" are its subtitles, and "NAME - LABEL.LANG.srt" subtitles of that rendition alone. The
// audio tracks and text subtitle streams of the highest-rate rendition are the title's tracks.
// The renditions' keyframes must be at the same times, within a frame, so that a player can switch
// at any segment boundary; a folder whose renditions are not aligned stays a folder of movies.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vod/media/media_info.hpp"
#include "vod/protocol/catalog_layout.hpp"

namespace vod::server::titles {

// What the decider knows of one catalog entry.
struct EntryFacts {
  std::string name;  // the catalog name (a path)
  std::uint32_t entry = 0;
  bool is_media = false;
  bool indexed = false;  // its keyframe index is known (not pending with the lazy indexer)
  std::vector<std::uint64_t> keyframes_us;
  std::uint64_t bitrate_bps = 0;
  std::uint32_t frame_rate_num = 0, frame_rate_den = 0;
  std::vector<media::StreamTrack> tracks;
};

struct Grouping {
  std::vector<proto::Title> titles;  // sorted by name
  // Folders that hold renditions but are not offered as titles, with why (for one log line each):
  // keyframes not aligned (naming the first that differs), a rendition not yet indexed.
  std::vector<std::pair<std::string, std::string>> refused;
};

// Whether a file's name could make it part of a title (a rendition or a sidecar): it is in a
// folder and starts with the folder's name. Only these need facts; a library's other files are
// skipped before their indexes are copied.
bool could_be_in_title(const std::string& name);

// `entries` in any order; entry indexes as the catalog has them.
Grouping group_titles(std::span<const EntryFacts> entries);

// The alignment check alone: nullopt when `b`'s keyframes are at `a`'s times within
// `tolerance_us`, else what differs ("keyframe 12 at 24.000 s in A, 26.000 s in B").
std::optional<std::string> misalignment(const EntryFacts& a, const EntryFacts& b, std::uint64_t tolerance_us);

}  // namespace vod::server::titles
