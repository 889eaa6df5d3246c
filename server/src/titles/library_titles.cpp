// SPDX-License-Identifier: LGPL-2.1-or-later
#include "titles/library_titles.hpp"

#include "titles/title_grouping.hpp"
#include "vod/log.hpp"

namespace vod::server::titles {

std::vector<proto::Title> LibraryTitles::update(const Library& library) {
  std::vector<EntryFacts> facts;
  for (std::size_t i = 0; i < library.movies.size(); ++i) {
    const LoadedMovie& m = *library.movies[i];
    if (!could_be_in_title(m.name)) continue;  // most of a library: no copy of its index
    EntryFacts f;
    f.name = m.name;
    f.entry = static_cast<std::uint32_t>(i);
    f.is_media = m.info.is_media && !m.probe_pending;
    f.indexed = !m.probe_pending && !m.index_pending;
    for (const auto& k : m.index.entries) f.keyframes_us.push_back(k.time_us);
    f.bitrate_bps = m.info.bitrate_bps;
    f.frame_rate_num = m.info.frame_rate_num;
    f.frame_rate_den = m.info.frame_rate_den;
    f.tracks = m.info.tracks;
    facts.push_back(std::move(f));
  }
  Grouping g = group_titles(facts);
  std::map<std::string, std::string> now;
  for (const auto& t : g.titles) {
    std::string labels;
    for (const auto& r : t.renditions) labels += (labels.empty() ? "" : ", ") + r.label;
    std::size_t audio = 0;
    for (const auto& k : t.tracks) audio += k.kind == proto::TrackKind::audio;
    now[t.name] = "title '" + t.name + "': " + std::to_string(t.renditions.size()) + " renditions (" + labels + "), " +
                  std::to_string(audio) + " audio and " + std::to_string(t.tracks.size() - audio) + " subtitle tracks";
    if (said_[t.name] != now[t.name]) log::info("library", now[t.name]);
  }
  for (const auto& [folder, why] : g.refused) {
    now[folder] = "'" + folder + "' is served as separate movies, not as a title: " + why;
    if (said_[folder] != now[folder]) log::info("library", now[folder]);
  }
  for (const auto& [folder, line] : said_)
    if (!line.empty() && !now.count(folder)) log::info("library", "'" + folder + "' is no longer a title (its renditions changed or went)");
  said_ = std::move(now);
  return std::move(g.titles);
}

}  // namespace vod::server::titles
