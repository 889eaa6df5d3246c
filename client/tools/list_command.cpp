// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client list rdma://host[:port] (or a fleet): the catalog as a table.
#include <cstdio>

#include "commands.hpp"
#include "progress_bar.hpp"
#include "vod/client/fleet.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::client::cli {

namespace {
std::string duration_text(std::uint64_t us) {
  if (us == 0) return "-";
  const std::uint64_t s = us / 1'000'000;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
                static_cast<unsigned long long>(s / 60 % 60), static_cast<unsigned long long>(s % 60));
  return buf;
}
}  // namespace

int run_list(const std::vector<std::string>& args) {
  CommonOptions common;
  auto opts = common_options(common);
  std::string uri_text;
  boost::program_options::variables_map vm;
  if (!parse(args, opts, "vod-client list rdma://host[:port]", uri_text, vm)) return exit_ok;
  apply(common);
  Uri uri = common.cluster.empty() ? parse_uri(uri_text) : command_uri("", common);
  uri.movie.reset();  // the catalog comes with any connection; ask for nothing else
  proto::Catalog c;
  std::string where;
  if (uri.cluster) {  // a fleet: every member's catalog, merged
    std::vector<std::string> unreachable;
    c = read_fleet_catalog(uri, common.session, &unreachable);
    for (const auto& u : unreachable) std::fprintf(stderr, "vod-client: left out of the list: %s\n", u.c_str());
    where = uri.to_string();
  } else {
    Session session(uri, common.session);
    c = session.catalog();
    where = session.server();
  }
  std::printf("catalog generation %u on %s: %zu movies\n", c.generation, where.c_str(), c.entries.size());
  std::printf("%-40s %12s %9s %10s %-10s %s\n", "NAME", "SIZE", "DURATION", "BITRATE", "CONTAINER", "VIDEO");
  for (const auto& e : c.entries) {
    if (proto::window_channel(e.name)) continue;  // shown on its channel's line
    char bitrate[32] = "-";
    if (e.bitrate_bps) std::snprintf(bitrate, sizeof bitrate, "%.2f Mb/s", static_cast<double>(e.bitrate_bps) / 1e6);
    std::string video = e.video_codec.empty() ? "-" : e.video_codec + " " + std::to_string(e.width) + "x" + std::to_string(e.height);
    const bool live = e.flags & proto::kEntryLive;  // its URI is rdma://host/live/NAME; SIZE is its ring
    const proto::CatalogEntry* window = live ? c.find(proto::window_entry_name(e.name)) : nullptr;
    const std::string kind = window ? "live channel, DVR " + duration_text(window->duration_us) : "live channel";
    std::printf("%-40s %12s %9s %10s %-10s %s\n", e.name.c_str(), human_bytes(static_cast<double>(e.size)).c_str(),
                live ? "LIVE" : duration_text(e.duration_us).c_str(), bitrate, e.container.empty() ? "raw" : e.container.c_str(),
                live ? kind.c_str() : video.c_str());
  }
  if (c.titles.empty()) return exit_ok;
  // Titles (renditions of one movie, for adaptive bitrate): rdma://host/TITLE and /hls/TITLE/master.m3u8.
  std::printf("\n%zu titles\n%-40s %-24s %-16s %s\n", c.titles.size(), "TITLE", "RENDITIONS", "AUDIO", "SUBTITLES");
  for (const auto& t : c.titles) {
    std::string renditions, audio, subtitles;
    for (const auto& r : t.renditions) renditions += (renditions.empty() ? "" : " ") + r.label;
    for (const auto& k : t.tracks) {
      std::string& into = k.kind == proto::TrackKind::audio ? audio : subtitles;
      into += (into.empty() ? "" : " ") + (k.language.empty() ? std::string("und") : k.language);
    }
    std::printf("%-40s %-24s %-16s %s\n", t.name.c_str(), renditions.c_str(), audio.empty() ? "-" : audio.c_str(),
                subtitles.empty() ? "-" : subtitles.c_str());
  }
  return exit_ok;
}

}  // namespace vod::client::cli
