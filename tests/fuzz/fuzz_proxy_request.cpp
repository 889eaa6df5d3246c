// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy's whole request path on arbitrary bytes: Beast's parser with the proxy's own limits,
// then answer() (the Host check, /metrics, the static pages, route() over a catalog with movies, a
// raw file and a live channel, Range and conditional requests). Whatever arrives, the answer is a
// plan with a valid status, headers that cannot split the response (no CR or LF), and a movie range
// inside the movie; nothing throws, crashes or reads out of bounds.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "request_path.hpp"

namespace {

using namespace vod;

const proto::Catalog& catalog() {
  static const proto::Catalog c = [] {
    proto::Catalog c{7, {}, 0, {}};
    auto add = [&](std::string name, std::uint64_t size, std::uint32_t flags, std::string container, std::string mime) {
      proto::CatalogEntry e;
      e.name = std::move(name);
      e.size = size;
      e.movie = {0x1000, size, 1};
      e.index = {0x2000, 64, 2};
      e.flags = flags;
      e.container = std::move(container);
      e.mime_type = std::move(mime);
      e.duration_us = 60'000'000;
      e.bitrate_bps = 1'000'000;
      e.width = 854;
      e.height = 480;
      e.video_codec = "h264";
      c.entries.push_back(std::move(e));
    };
    add("a.ts", 7'500'000, proto::kEntryIsMedia, "mpegts", "video/mp2t");
    add("b b.mp4", 1'000'001, proto::kEntryIsMedia, "mp4", "video/mp4");
    add("raw.bin", 1, 0, "", "application/octet-stream");
    add("empty.bin", 0, 0, "", "application/octet-stream");
    add("cam", 1 << 20, proto::kEntryIsMedia | proto::kEntryLive, "mpegts", "video/mp2t");
    // A title, for its HLS and DASH routes: two renditions, two audio tracks, a sidecar's subtitles.
    add("T/T - 720p.mkv", 2'000'000, proto::kEntryIsMedia, "matroska", "video/x-matroska");
    add("T/T - 360p.mp4", 1'000'000, proto::kEntryIsMedia, "mp4", "video/mp4");
    add("T/T.en.srt", 100, 0, "", "application/octet-stream");
    proto::Title t{"T", {{5, "720p", 25, 1}, {6, "360p", 25, 1}}, {}};
    t.tracks.push_back({proto::TrackKind::audio, true, "en", "aac", "", 5, 1, 2, proto::kAllRenditions});
    t.tracks.push_back({proto::TrackKind::audio, false, "de", "aac", "", 5, 2, 2, proto::kAllRenditions});
    t.tracks.push_back({proto::TrackKind::subtitles, false, "en", "subrip", "", 7, proto::kWholeFile, 0, proto::kAllRenditions});
    c.titles.push_back(t);
    return c;
  }();
  return c;
}

void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "fuzz_proxy_request: %s\n", what);
    std::abort();
  }
}

bool splits(const std::string& s) { return s.find_first_of("\r\n") != std::string::npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace http = boost::beast::http;
  using namespace vod::proxy;
  static const WebPages pages = WebPages::load(VOD_TEST_WEB_DIR);
  static const HostAllowList hosts = allowed_hosts_for("127.0.0.1", {"vod.example"}, {}, "");

  http::request_parser<http::empty_body> parser;
  limit_parser(parser, 8192);
  parser.eager(true);
  boost::beast::error_code ec;
  std::size_t at = 0;
  while (at < size && !ec && !parser.is_done()) {
    const std::size_t used = parser.put(boost::asio::const_buffer(data + at, size - at), ec);
    if (ec == http::error::need_more) ec = {};
    if (used == 0) break;
    at += used;
  }
  if (!ec && !parser.is_done() && parser.got_some()) parser.put_eof(ec);  // as http::read does at the end of the stream
  if (ec || !parser.is_done()) return 0;                                  // the connection answers 400/413/431 and closes

  const RequestContext context{hosts,
                               pages,
                               "127.0.0.1:8080",
                               "rdma://192.0.2.1:7470",
                               []() -> const proto::Catalog& { return catalog(); },
                               [] { return std::string("# metrics\n"); }};
  const RequestAnswer a = answer(parser.get(), context);
  const Plan& p = a.plan;
  check(p.status >= 100 && p.status <= 599, "a status outside 100..599");
  for (const auto& [name, value] : p.headers) check(!splits(name) && !splits(value) && !name.empty(), "a header that splits the response");
  if (const MovieRange* m = p.as<MovieRange>()) {
    const proto::CatalogEntry* e = nullptr;
    for (const auto& entry : catalog().entries)
      if (entry.name == m->name) e = &entry;
    check(e != nullptr, "a movie plan for a name the catalog lacks");
    check(m->offset <= e->size && m->length <= e->size - m->offset, "a range outside the movie");
    check(p.status == 200 || p.status == 206, "a movie body with a status other than 200 or 206");
  }
  if (const LiveStream* l = p.as<LiveStream>()) check(!l->channel.empty(), "a live body without a channel");
  // A body is one thing (Body is a variant); a status that carries none has text (an error page).
  if (p.status >= 400) check(p.as<std::string>() != nullptr, "an error whose body is not its text");
  return 0;
}
