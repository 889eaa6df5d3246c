// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel's DVR window over HTTP (vod-server --live-dvr; docs/proxy.md, "Live DVR"): its
// sliding playlist and the window's bytes by the ranges the playlist lists.
#include "route_parts.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::proxy::routing {

// /hls/live/NAME/dvr.m3u8[?_HLS_skip=YES]: the channel's DVR window as a sliding playlist, whose
// segments are byte ranges of /hls/live/NAME/dvr.ts: the window read by stream offsets (its entry
// '.dvr/NAME', the Range path, one-sided Reads).
Plan dvr_request(const Request& r, const proto::CatalogEntry& channel, const std::string& file, const Site& site) {
  const proto::CatalogEntry* window = site.catalog.find(proto::window_entry_name(channel.name));
  if (!window)
    return error_plan(404, "'" + channel.name + "' keeps no DVR window (vod-server --live-dvr); its live playlist is index.m3u8");
  if (file == "dvr.ts") {
    proto::CatalogEntry by_offsets = *window;
    by_offsets.size = proto::kWindowStreamBytes;  // ranges are stream offsets
    by_offsets.content = {};
    if (r.range.empty()) return error_plan(416, "dvr.ts is read by the byte ranges dvr.m3u8 lists (a Range header)");
    Plan p = movie(r, by_offsets);
    p.headers.emplace_back("Cache-Control", "max-age=60");
    return p;
  }
  const auto skip = query_value(r.target, "_HLS_skip");
  if (!skip) return error_plan(400, "bad percent-encoding in the query");
  HlsWant w;
  w.kind = HlsWant::Kind::dvr;
  w.name = window->name;
  w.skip = *skip == "YES" || *skip == "v2";
  Plan p;
  p.headers = {{"Content-Type", "application/vnd.apple.mpegurl"}, {"Cache-Control", "no-cache"}};
  p.body = std::move(w);
  p.send_body = r.method == "GET";
  return p;
}

}  // namespace vod::proxy::routing
