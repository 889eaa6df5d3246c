// SPDX-License-Identifier: LGPL-2.1-or-later
// Longer than 400 lines because: its 25 cases are tables over the pure pieces of vod-proxy's HTTP
// logic, which share one set of request and catalog builders.
// vod-proxy's HTTP logic without sockets: the Range parser, route() (movies, pages, live channels,
// errors), the Host allow-list (DNS rebinding) and the connection cap's slots.
#include <gtest/gtest.h>

#include "connection_slots.hpp"
#include "host_allow_list.hpp"
#include "movie_session_state.hpp"
#include "range_blocks.hpp"
#include "request_path.hpp"
#include "request_router.hpp"
#include "vod/client/byte_range.hpp"
#include "vod/client/uri.hpp"
#include "web_pages.hpp"

namespace vod::proxy {
namespace {

using client::decide_range;
using Kind = client::RangeDecision::Kind;

TEST(Range, SingleRangesOfEveryForm) {
  auto r = decide_range("bytes=0-499", 1000);
  EXPECT_EQ(r.kind, Kind::single);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.length, 500u);
  r = decide_range("bytes=500-", 1000);  // open-ended
  EXPECT_EQ(r.kind, Kind::single);
  EXPECT_EQ(r.first, 500u);
  EXPECT_EQ(r.length, 500u);
  r = decide_range("bytes=-100", 1000);  // suffix
  EXPECT_EQ(r.first, 900u);
  EXPECT_EQ(r.length, 100u);
  r = decide_range("bytes=-5000", 1000);  // a suffix longer than the entity is all of it
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.length, 1000u);
  r = decide_range("bytes=990-5000", 1000);  // a last byte past the end is clipped
  EXPECT_EQ(r.first, 990u);
  EXPECT_EQ(r.length, 10u);
  r = decide_range(" Bytes = 7-7 ", 1000);
  EXPECT_EQ(r.kind, Kind::single);
  EXPECT_EQ(r.length, 1u);
}

TEST(Range, UnsatisfiableAndInvalid) {
  EXPECT_EQ(decide_range("bytes=1000-", 1000).kind, Kind::unsatisfiable);  // VLC probes past the end
  EXPECT_EQ(decide_range("bytes=5000-6000", 1000).kind, Kind::unsatisfiable);
  EXPECT_EQ(decide_range("bytes=-0", 1000).kind, Kind::unsatisfiable);
  EXPECT_EQ(decide_range("bytes=0-", 0).kind, Kind::unsatisfiable);
  EXPECT_EQ(decide_range("bytes=-10", 0).kind, Kind::unsatisfiable);
  for (const char* bad : {"bytes=", "bytes=abc", "bytes=5-2", "bytes=--5", "bytes=1-2-3", "bytes", "bytes=99999999999999999999-",
                          "bytes=0-99999999999999999999", "bytes=-1x", "bytes= , "})
    EXPECT_EQ(decide_range(bad, 1000).kind, Kind::invalid) << bad;
}

TEST(Range, MultipleAndOtherUnits) {
  EXPECT_EQ(decide_range("bytes=0-1,5-9", 1000).kind, Kind::multiple);
  EXPECT_EQ(decide_range("bytes=0-1, 5000-6000", 1000).kind, Kind::multiple);  // one satisfiable is enough
  EXPECT_EQ(decide_range("bytes=5000-6000,7000-", 1000).kind, Kind::unsatisfiable);
  EXPECT_EQ(decide_range("bytes=0-1,,", 1000).kind, Kind::single);  // empty list elements are allowed
  EXPECT_EQ(decide_range("items=0-5", 1000).kind, Kind::none);      // unknown units are ignored
  EXPECT_EQ(decide_range("", 1000).kind, Kind::none);
}

proto::Catalog catalog() {
  proto::Catalog c;
  c.generation = 4;
  proto::CatalogEntry e;
  e.name = "a b.ts";
  e.size = 1000;
  e.duration_us = 60'000'000;
  e.mime_type = "video/mp2t";
  e.container = "mpegts";
  e.video_codec = "h264";
  e.content.kind = proto::kContentSha256;
  e.content.digest[0] = 0xab;
  c.entries.push_back(e);
  e.content = {};  // the next one's identity is not known yet
  e.name = "<x>.mp4";
  e.mime_type = "video/mp4";
  e.container = "mp4";
  c.entries.push_back(e);
  proto::CatalogEntry live;
  live.name = "cam 1";
  live.size = 1 << 20;
  live.flags = proto::kEntryIsMedia | proto::kEntryLive;
  live.mime_type = "video/mp2t";
  c.entries.push_back(live);
  return c;
}

// The pages from the source tree (tests/CMakeLists.txt names it).
const WebPages& pages() {
  static const WebPages p = WebPages::load(VOD_TEST_WEB_DIR);
  return p;
}

Plan route_on(const Request& r, const proto::Catalog& c, const std::string& default_host) {
  return route(r, Site{c, pages(), default_host, "rdma://10.0.0.1:7471"});
}

Plan get(const std::string& target, const std::string& range = "", const std::string& method = "GET") {
  Request r;
  r.method = method;
  r.target = target;
  r.host = "127.0.0.1:8080";
  r.range = range;
  const proto::Catalog c = catalog();
  return route_on(r, c, "127.0.0.1:9");
}

TEST(Router, MovieWholeAndRanges) {
  Plan p = get("/movies/a%20b.ts");
  EXPECT_EQ(p.status, 200u);
  EXPECT_EQ(p.as<MovieRange>()->name, "a b.ts");
  EXPECT_EQ(p.as<MovieRange>()->offset, 0u);
  EXPECT_EQ(p.as<MovieRange>()->length, 1000u);
  EXPECT_EQ(*p.header("Content-Type"), "video/mp2t");
  EXPECT_EQ(*p.header("Accept-Ranges"), "bytes");
  EXPECT_EQ(*p.header("ETag"), etag_for(catalog().entries[0]));
  EXPECT_TRUE(p.send_body);

  p = get("/movies/a%20b.ts", "bytes=100-199");
  EXPECT_EQ(p.status, 206u);
  EXPECT_EQ(p.as<MovieRange>()->offset, 100u);
  EXPECT_EQ(p.as<MovieRange>()->length, 100u);
  EXPECT_EQ(*p.header("Content-Range"), "bytes 100-199/1000");

  p = get("/movies/a%20b.ts", "bytes=-1");
  EXPECT_EQ(*p.header("Content-Range"), "bytes 999-999/1000");

  p = get("/movies/a%20b.ts", "bytes=1000-");
  EXPECT_EQ(p.status, 416u);
  EXPECT_EQ(*p.header("Content-Range"), "bytes */1000");
  EXPECT_FALSE(p.as<MovieRange>());

  p = get("/movies/a%20b.ts", "bytes=0-1,3-4");
  EXPECT_EQ(p.status, 200u);  // multiple ranges: the whole entity
  EXPECT_EQ(p.as<MovieRange>()->length, 1000u);

  p = get("/movies/a%20b.ts", "", "HEAD");
  EXPECT_EQ(p.status, 200u);
  EXPECT_FALSE(p.send_body);
  EXPECT_EQ(p.body_length(), 1000u);
}

TEST(Router, Validators) {
  const std::string etag = etag_for(catalog().entries[0]);
  Request r{"GET", "/movies/a%20b.ts", "", "bytes=0-9", "\"stale\"", "", ""};
  Plan p = route_on(r, catalog(), "h");
  EXPECT_EQ(p.status, 200u) << "If-Range with another validator: the whole movie";
  r.if_range = etag;
  EXPECT_EQ(route_on(r, catalog(), "h").status, 206u);
  r.if_match = "\"other\"";
  EXPECT_EQ(route_on(r, catalog(), "h").status, 412u);
  r.if_match = "\"other\", " + etag;
  EXPECT_EQ(route_on(r, catalog(), "h").status, 206u);
  r.if_match = "*";
  EXPECT_EQ(route_on(r, catalog(), "h").status, 206u);
  r.if_none_match = etag;
  p = route_on(r, catalog(), "h");
  EXPECT_EQ(p.status, 304u);
  EXPECT_FALSE(p.send_body);
}

// The ETag is the bytes' identity: the same over another generation (a rescan, another member with
// the same bytes), another with other bytes, and none while the identity is not known, so that no
// If-Range resume and no cache can join two versions (issue 43).
TEST(Router, EtagIsTheContentIdentity) {
  proto::Catalog c = catalog();
  const std::string etag = etag_for(c.entries[0]);
  EXPECT_EQ(etag, "\"ab000000000000000000000000000000-1000\"");
  c.generation = 9;
  EXPECT_EQ(*route_on(Request{"GET", "/movies/a%20b.ts", "", "", "", "", ""}, c, "h").header("ETag"), etag)
      << "the same over another generation";
  proto::Catalog other = c;
  other.entries[0].content.digest[15] = 1;
  Request r{"GET", "/movies/a%20b.ts", "", "bytes=0-9", etag, "", ""};
  EXPECT_EQ(route_on(r, c, "h").status, 206u);
  EXPECT_EQ(route_on(r, other, "h").status, 200u) << "other bytes of one size: the whole movie, not a splice";
  EXPECT_EQ(route_on(r, other, "h").as<MovieRange>()->content, other.entries[0].content) << "the pool reads the version the ETag names";

  Request unknown{"GET", "/movies/%3Cx%3E.mp4", "", "bytes=0-9", "", "", ""};
  Plan p = route_on(unknown, c, "h");
  EXPECT_EQ(p.status, 206u);
  EXPECT_FALSE(p.header("ETag")) << "no validator while the identity is not known";
  unknown.if_range = "\"\"";
  EXPECT_EQ(route_on(unknown, c, "h").status, 200u);
  unknown.if_range.clear();
  unknown.if_none_match = "\"\"";
  EXPECT_EQ(route_on(unknown, c, "h").status, 206u);
  unknown.if_match = "\"\"";
  EXPECT_EQ(route_on(unknown, c, "h").status, 412u);
  unknown.if_match = "*";
  EXPECT_EQ(route_on(unknown, c, "h").status, 206u);
}

// The catalog last read, served while the server does not answer (issue 30): the pages made from
// it say so; the movie bytes and the static files need no mark.
TEST(Router, AStaleCatalogIsMarked) {
  const proto::Catalog c = catalog();
  Request r;
  r.method = "GET";
  r.host = "127.0.0.1:8080";
  const std::string why =
      "the vod-server at rdma://10.0.0.1:7470 has not answered the catalog read started 3 s ago; this catalog was read 9 s ago";
  for (const char* target : {"/", "/catalog.json", "/playlist.m3u", "/watch/a%20b.ts"}) {
    SCOPED_TRACE(target);
    r.target = target;
    const Plan fresh = route(r, Site{c, pages(), "127.0.0.1:9", "rdma://10.0.0.1:7470"});
    EXPECT_EQ(fresh.header("X-Catalog-Stale"), nullptr);
    const Plan stale = route(r, Site{c, pages(), "127.0.0.1:9", "rdma://10.0.0.1:7470", why});
    EXPECT_EQ(stale.status, 200u);
    ASSERT_NE(stale.header("X-Catalog-Stale"), nullptr);
    EXPECT_EQ(*stale.header("X-Catalog-Stale"), why);
  }
  r.target = "/catalog.json";
  const Plan json = route(r, Site{c, pages(), "127.0.0.1:9", "rdma://10.0.0.1:7470", why});
  EXPECT_NE(json.text().find("\"stale\":true,\"stale_reason\":\"the vod-server at"), std::string::npos) << json.text();
  r.target = "/movies/a%20b.ts";
  EXPECT_EQ(route(r, Site{c, pages(), "127.0.0.1:9", "rdma://10.0.0.1:7470", why}).header("X-Catalog-Stale"), nullptr)
      << "movie bytes are the same";
}

TEST(Router, PagesAndPlaylist) {
  Plan p = get("/");
  EXPECT_EQ(p.status, 200u);
  EXPECT_NE(p.text().find("href=\"/watch/a%20b.ts\""), std::string::npos);
  EXPECT_NE(p.text().find("src=\"/poster/a%20b.ts?g=4\""), std::string::npos);
  EXPECT_NE(p.text().find("&lt;x&gt;.mp4"), std::string::npos) << "names are HTML-escaped";
  p = get("/catalog.json");
  EXPECT_EQ(*p.header("Content-Type"), "application/json");
  EXPECT_NE(p.text().find("\"name\":\"a b.ts\""), std::string::npos);
  EXPECT_NE(p.text().find("\"generation\":4"), std::string::npos);
  p = get("/playlist.m3u?x=1");
  EXPECT_EQ(p.text().rfind("#EXTM3U\n", 0), 0u);
  EXPECT_NE(p.text().find("#EXTINF:60,a b.ts\nhttp://127.0.0.1:8080/movies/a%20b.ts\n"), std::string::npos) << p.text();
  Request no_host{"GET", "/playlist.m3u", "", "", "", "", ""};
  EXPECT_NE(route_on(no_host, catalog(), "127.0.0.1:9").text().find("http://127.0.0.1:9/movies/"), std::string::npos);
}

TEST(Router, LiveChannelsAreEndlessStreamsUnderLive) {
  Plan p = get("/live/cam%201", "bytes=0-99");  // a Range means nothing for an endless stream
  EXPECT_EQ(p.status, 200u);
  EXPECT_EQ(p.as<LiveStream>()->channel, "cam 1");
  EXPECT_FALSE(p.as<MovieRange>());
  EXPECT_EQ(*p.header("Content-Type"), "video/mp2t");
  EXPECT_EQ(*p.header("Cache-Control"), "no-store");
  EXPECT_EQ(p.header("Content-Range"), nullptr);
  EXPECT_FALSE(get("/live/cam%201", "", "HEAD").send_body);
  EXPECT_EQ(get("/live/nope").status, 404u);
  EXPECT_NE(get("/movies/cam%201").text().find("is a live channel: /live/cam%201"), std::string::npos);
  EXPECT_NE(get("/live/a%20b.ts").text().find("is a movie: /movies/a%20b.ts"), std::string::npos);
  EXPECT_NE(get("/playlist.m3u").text().find("#EXTINF:-1,cam 1\nhttp://127.0.0.1:8080/live/cam%201\n"), std::string::npos);
  EXPECT_NE(get("/").text().find("href=\"/watch/cam%201\""), std::string::npos);
  EXPECT_NE(get("/watch/cam%201").text().find("<code>http://127.0.0.1:8080/live/cam%201</code>"), std::string::npos);
  EXPECT_NE(get("/catalog.json").text().find("\"url\":\"/live/cam%201\",\"live\":true"), std::string::npos);
}

TEST(Router, BadRequests) {
  EXPECT_EQ(get("/movies/nope.mp4").status, 404u);
  EXPECT_NE(get("/movies/nope.mp4").text().find("no movie 'nope.mp4'"), std::string::npos);
  EXPECT_EQ(get("/elsewhere").status, 404u);
  EXPECT_EQ(get("/movies/../etc/passwd").status, 400u);
  EXPECT_EQ(get("/movies/..").status, 400u);
  EXPECT_EQ(get("/movies/a%2Fb").status, 404u);  // a path, as /movies/a/b: no such movie
  for (const char* traversal : {"/movies/a/../../etc/passwd", "/movies/a/..%2F..%2Fetc", "/movies/a//b", "/movies/a/", "/movies//a",
                                "/movies/a/./b", "/movies/%C0%AF", "/live/a/b"})
    EXPECT_EQ(get(traversal).status, 400u) << traversal;
  EXPECT_EQ(get("/movies/a%00b").status, 400u);
  EXPECT_EQ(get("/movies/a%zz").status, 400u);
  EXPECT_EQ(get("http://evil/x").status, 400u);
  Plan p = get("/", "", "DELETE");
  EXPECT_EQ(p.status, 405u);
  EXPECT_EQ(*p.header("Allow"), "GET, HEAD");
  EXPECT_EQ(get("/movies/a%20b.ts", "bytes=abc").status, 416u);
  EXPECT_EQ(get("/movies/a%20b.ts", "bytes=0-99999999999999999999").status, 416u);
}

// A catalog whose names are hostile: markup, quotes, ampersands, non-ASCII.
proto::Catalog hostile_catalog() {
  proto::Catalog c;
  c.generation = 9;
  proto::CatalogEntry e;
  e.name = "<script>alert(\"x\")<\\script> 'q' & é 日本.mp4";  // names cannot hold /
  e.size = 5'000'000;
  e.duration_us = 3'723'000'000;
  e.container = "mp4";
  e.mime_type = "video/mp4";
  e.video_codec = "h264";
  e.audio_codec = "aac";
  e.width = 854;
  e.height = 480;
  e.flags = proto::kEntryIsMedia;
  c.entries.push_back(e);
  return c;
}

TEST(Pages, HostileNamesAreShownLiterally) {
  const proto::Catalog c = hostile_catalog();
  Request r{"GET", "/", "h:1", "", "", "", ""};
  const std::string page = route_on(r, c, "h").text();
  EXPECT_EQ(page.find("<script>"), std::string::npos) << "no markup from a name reaches the page";
  EXPECT_NE(page.find("&lt;script&gt;alert(&quot;x&quot;)&lt;\\script&gt; &apos;q&apos; &amp; é 日本.mp4"), std::string::npos) << page;
  // In URLs the name is percent-encoded (UTF-8 bytes), never raw.
  const std::string encoded = client::percent_encode(c.entries[0].name);
  EXPECT_NE(page.find("href=\"/watch/" + encoded + "\""), std::string::npos) << page;
  EXPECT_NE(page.find("1:02:03 · 854×480 · h264 / aac · 5.0 MB"), std::string::npos) << page;

  r.target = "/watch/" + encoded;
  const Plan watch = route_on(r, c, "h");
  EXPECT_EQ(watch.status, 200u);
  EXPECT_EQ(watch.text().find("<script>alert"), std::string::npos);
  EXPECT_NE(watch.text().find("<title>&lt;script&gt;alert(&quot;x&quot;)&lt;\\script&gt;"), std::string::npos) << watch.text();
  EXPECT_NE(watch.text().find("<video id=\"player\""), std::string::npos);
  EXPECT_NE(watch.text().find("src=\"/movies/" + encoded + "\""), std::string::npos);
}

TEST(Pages, WatchPageForEachKind) {
  // MP4: a <video> on its HLS playlist, then the file itself (?t= as a media fragment), a strip of
  // kStripFrames pictures.
  Plan p = get("/watch/%3Cx%3E.mp4?t=30");
  EXPECT_EQ(p.status, 200u);
  const auto hls_source = p.text().find("<source src=\"/hls/%3Cx%3E.mp4/master.m3u8\" type=\"application/vnd.apple.mpegurl\">");
  const auto file_source = p.text().find("<source src=\"/movies/%3Cx%3E.mp4#t=30.000\" type=\"video/mp4\">");
  EXPECT_NE(hls_source, std::string::npos) << p.text();
  EXPECT_NE(file_source, std::string::npos) << p.text();
  EXPECT_LT(hls_source, file_source);
  EXPECT_NE(p.text().find("data-start=\"30.000\""), std::string::npos);
  std::size_t frames = 0;
  for (std::size_t at = p.text().find("/strip/"); at != std::string::npos; at = p.text().find("/strip/", at + 1)) ++frames;
  EXPECT_EQ(frames, kStripFrames);
  EXPECT_NE(p.text().find("/strip/7/%3Cx%3E.mp4?g=4"), std::string::npos);
  // MPEG-TS: its HLS playlist only (browsers play no bare TS), ?t= for the script, and the file's
  // own URL for VLC.
  p = get("/watch/a%20b.ts?t=30");
  EXPECT_NE(p.text().find("<source src=\"/hls/a%20b.ts/master.m3u8\" type=\"application/vnd.apple.mpegurl\">"), std::string::npos)
      << p.text();
  EXPECT_EQ(p.text().find("<source src=\"/movies/a%20b.ts"), std::string::npos) << p.text();
  EXPECT_NE(p.text().find("data-start=\"30.000\""), std::string::npos);
  EXPECT_NE(p.text().find("<code>http://127.0.0.1:8080/movies/a%20b.ts</code>"), std::string::npos);
  // A live channel: its LL-HLS playlist, and nothing else (no browser plays bare TS).
  p = get("/watch/cam%201");
  EXPECT_NE(p.text().find("<source src=\"/hls/live/cam%201/index.m3u8\" type=\"application/vnd.apple.mpegurl\">"), std::string::npos)
      << p.text();
  EXPECT_EQ(p.text().find("<source src=\"/live/"), std::string::npos) << p.text();
  // Bad times and names.
  EXPECT_EQ(get("/watch/%3Cx%3E.mp4?t=abc").status, 400u);
  EXPECT_EQ(get("/watch/%3Cx%3E.mp4?t=-1").status, 400u);
  EXPECT_EQ(get("/watch/nope").status, 404u);
  EXPECT_EQ(get("/watch/..").status, 400u);
}

TEST(Router, HlsPlaylistsOfTsMoviesWaitForTheirFacts) {
  Plan p = get("/hls/a%20b.ts/index.m3u8");
  ASSERT_TRUE(p.as<HlsWant>());
  EXPECT_EQ(p.as<HlsWant>()->kind, HlsWant::Kind::media);
  EXPECT_EQ(p.as<HlsWant>()->name, "a b.ts");
  EXPECT_EQ(*p.header("Content-Type"), "application/vnd.apple.mpegurl");
  hls::MovieFacts facts;
  facts.segments = {{{188, 400}, 0, 4'000'000}, {{588, 412}, 4'000'000, 2'000'000}};
  facts.ts_init = hls::ByteSpan{0, 188};
  facts.codecs = "avc1.64001e";
  const Plan media = hls_plan(p, facts);
  EXPECT_EQ(media.status, 200u);
  EXPECT_FALSE(media.as<HlsWant>());
  EXPECT_NE(media.text().find("#EXT-X-MAP:URI=\"/movies/a%20b.ts\",BYTERANGE=\"188@0\"\n"), std::string::npos) << media.text();
  EXPECT_NE(media.text().find("#EXT-X-BYTERANGE:412@588\n/movies/a%20b.ts\n#EXT-X-ENDLIST\n"), std::string::npos) << media.text();
  // A name without a media extension: the same movie by the Range path under movie.ts.
  const Plan range = get("/hls/a%20b.ts/movie.ts", "bytes=188-587");
  EXPECT_EQ(range.status, 206u);
  EXPECT_EQ(range.as<MovieRange>()->name, "a b.ts");
  EXPECT_EQ(range.as<MovieRange>()->offset, 188u);
  EXPECT_EQ(range.as<MovieRange>()->length, 400u);
  EXPECT_EQ(get("/hls/%3Cx%3E.mp4/movie.ts").status, 404u);
  Plan m = get("/hls/a%20b.ts/master.m3u8");
  ASSERT_TRUE(m.as<HlsWant>());
  const Plan master = hls_plan(m, facts);
  EXPECT_NE(master.text().find("BANDWIDTH=1648,"), std::string::npos) << master.text();  // 412 B in 2 s
  EXPECT_NE(master.text().find("CODECS=\"avc1.64001e\""), std::string::npos);
  EXPECT_TRUE(master.text().ends_with("\nindex.m3u8\n"));
  // Facts that could not be had: 503 with Retry-After while they may come, 404 when they cannot.
  facts.error = "the server is still building the keyframe index";
  facts.retry = true;
  const Plan later = hls_plan(p, facts);
  EXPECT_EQ(later.status, 503u);
  EXPECT_NE(later.header("Retry-After"), nullptr);
  facts.retry = false;
  EXPECT_EQ(hls_plan(p, facts).status, 404u);
}

TEST(Router, HlsRefusalsSayWhy) {
  const Plan mp4 = get("/hls/%3Cx%3E.mp4/seg-3.m4s");
  ASSERT_TRUE(mp4.as<HlsWant>());
  EXPECT_EQ(mp4.as<HlsWant>()->kind, HlsWant::Kind::segment);
  EXPECT_EQ(mp4.as<HlsWant>()->segment, 3u);
  EXPECT_EQ(*mp4.header("Content-Type"), "video/mp4");
  EXPECT_EQ(get("/hls/%3Cx%3E.mp4/init.mp4").as<HlsWant>()->kind, HlsWant::Kind::init);
  EXPECT_EQ(get("/hls/%3Cx%3E.mp4/seg-03.m4s").status, 404u);
  EXPECT_EQ(get("/hls/%3Cx%3E.mp4/seg-.m4s").status, 404u);
  EXPECT_EQ(get("/hls/%3Cx%3E.mp4/seg-99999999.m4s").status, 404u);
  EXPECT_EQ(get("/hls/a%20b.ts/seg-0.m4s").status, 404u);  // a TS movie's segments are ranges of the file
  const Plan piece = hls_piece_plan(mp4, "moof", "", false);
  EXPECT_EQ(piece.text(), "moof");
  EXPECT_EQ(hls_piece_plan(mp4, "", "no keyframe", false).status, 404u);
  EXPECT_EQ(get("/hls/cam%201/index.m3u8").status, 404u);  // a channel under the movies' path
  EXPECT_EQ(get("/hls/nope.ts/index.m3u8").status, 404u);
  EXPECT_EQ(get("/hls/a%20b.ts/other.m3u8").status, 404u);
  EXPECT_EQ(get("/hls/a%20b.ts").status, 404u);
  EXPECT_EQ(get("/hls/..%2Fx/index.m3u8").status, 400u);
  EXPECT_EQ(get("/hls/a%20b.ts/index.m3u8", "", "POST").status, 405u);
  EXPECT_FALSE(get("/hls/a%20b.ts/index.m3u8", "", "HEAD").send_body);
}

TEST(Router, LiveHlsRequestsGoToTheChannelsPackager) {
  Plan p = get("/hls/live/cam%201/index.m3u8");
  ASSERT_TRUE(p.as<LiveHlsWant>());
  EXPECT_EQ(p.as<LiveHlsWant>()->kind, LiveHlsWant::Kind::playlist);
  EXPECT_EQ(p.as<LiveHlsWant>()->channel, "cam 1");
  EXPECT_FALSE(p.as<LiveHlsWant>()->block);
  EXPECT_EQ(*p.header("Content-Type"), "application/vnd.apple.mpegurl");
  EXPECT_EQ(*p.header("Cache-Control"), "no-cache");  // a live playlist changes with every part
  // A blocking reload (rfc8216bis 6.2.5.2), with and without a part.
  p = get("/hls/live/cam%201/index.m3u8?_HLS_msn=900000001&_HLS_part=3");
  ASSERT_TRUE(p.as<LiveHlsWant>() && p.as<LiveHlsWant>()->block);
  EXPECT_EQ(p.as<LiveHlsWant>()->block->msn, 900000001u);
  EXPECT_EQ(p.as<LiveHlsWant>()->block->part, std::optional<std::size_t>(3));
  p = get("/hls/live/cam%201/index.m3u8?_HLS_msn=7");
  ASSERT_TRUE(p.as<LiveHlsWant>() && p.as<LiveHlsWant>()->block);
  EXPECT_FALSE(p.as<LiveHlsWant>()->block->part);
  EXPECT_EQ(get("/hls/live/cam%201/index.m3u8?_HLS_part=1").status, 400u);  // a part needs its segment
  EXPECT_EQ(get("/hls/live/cam%201/index.m3u8?_HLS_msn=x").status, 400u);
  EXPECT_EQ(get("/hls/live/cam%201/index.m3u8?_HLS_msn=1&_HLS_part=-1").status, 400u);
  EXPECT_EQ(get("/hls/live/cam%201/index.m3u8?_HLS_msn=99999999999999999999").status, 400u);
  // Segments and parts.
  p = get("/hls/live/cam%201/seg-42.ts");
  ASSERT_TRUE(p.as<LiveHlsWant>());
  EXPECT_EQ(p.as<LiveHlsWant>()->kind, LiveHlsWant::Kind::segment);
  EXPECT_EQ(p.as<LiveHlsWant>()->msn, 42u);
  EXPECT_EQ(*p.header("Content-Type"), "video/mp2t");
  p = get("/hls/live/cam%201/part-42.3.ts");
  ASSERT_TRUE(p.as<LiveHlsWant>());
  EXPECT_EQ(p.as<LiveHlsWant>()->kind, LiveHlsWant::Kind::part);
  EXPECT_EQ(p.as<LiveHlsWant>()->msn, 42u);
  EXPECT_EQ(p.as<LiveHlsWant>()->part, 3u);
  for (const char* bad :
       {"seg-042.ts", "seg-.ts", "seg-4.2.ts", "part-42.ts", "part-42..ts", "part-42.03.ts", "part-4.2.ts.ts", "seg-1.m4s", "x.m3u8", ""})
    EXPECT_EQ(get(std::string("/hls/live/cam%201/") + bad).status, 404u) << bad;
  EXPECT_EQ(get("/hls/live/a%20b.ts/index.m3u8").status, 404u);  // a movie under the channels' path
  EXPECT_EQ(get("/hls/live/nope/index.m3u8").status, 404u);
  EXPECT_EQ(get("/hls/live/..%2Fx/index.m3u8").status, 400u);
  // The service's answer: the body, or its error with the status it chose.
  Plan want = get("/hls/live/cam%201/seg-42.ts");
  EXPECT_EQ(live_hls_plan(want, LiveHlsReply{200, "TS", {}, false}).text(), "TS");
  const Plan gone = live_hls_plan(want, LiveHlsReply{404, {}, "segment 42 has left the live window", false});
  EXPECT_EQ(gone.status, 404u);
  EXPECT_NE(gone.text().find("left the live window"), std::string::npos);
  const Plan later = live_hls_plan(want, LiveHlsReply{503, {}, "not made yet", true});
  EXPECT_EQ(later.status, 503u);
  EXPECT_NE(later.header("Retry-After"), nullptr);
  EXPECT_EQ(live_hls_plan(want, LiveHlsReply{400, {}, "too far ahead", false}).status, 400u);
}

TEST(Cors, OffByDefaultAndExactlyTheListedOrigins) {
  EXPECT_EQ(invalid_cors_origin("https://player.example"), nullptr);
  EXPECT_EQ(invalid_cors_origin("http://[::1]:8080"), nullptr);
  EXPECT_NE(invalid_cors_origin("*"), nullptr);
  EXPECT_NE(invalid_cors_origin("https://player.example/"), nullptr);
  EXPECT_NE(invalid_cors_origin("ftp://x"), nullptr);
  EXPECT_NE(invalid_cors_origin("https://"), nullptr);

  const HostAllowList hosts = allowed_hosts_for("127.0.0.1", {}, {}, "");
  const proto::Catalog c = catalog();
  const std::vector<std::string> origins = {"https://player.example"};
  auto ask = [&](const std::string& method, const std::string& origin, const std::vector<std::string>* allowed) {
    HttpRequest req{boost::beast::http::string_to_verb(method), "/movies/a%20b.ts", 11};
    req.set(boost::beast::http::field::host, "127.0.0.1:8080");
    if (!origin.empty()) req.set(boost::beast::http::field::origin, origin);
    RequestContext context{
        hosts, pages(), "127.0.0.1:8080", "rdma://10.0.0.1", [&]() -> const proto::Catalog& { return c; }, [] { return std::string(); }};
    context.cors_origins = allowed;
    return answer(req, context).plan;
  };
  Plan p = ask("GET", "https://player.example", nullptr);  // off: no CORS header at all
  EXPECT_EQ(p.header("Access-Control-Allow-Origin"), nullptr);
  EXPECT_EQ(p.header("Vary"), nullptr);
  p = ask("GET", "https://player.example", &origins);
  ASSERT_NE(p.header("Access-Control-Allow-Origin"), nullptr);
  EXPECT_EQ(*p.header("Access-Control-Allow-Origin"), "https://player.example");
  EXPECT_NE(p.header("Access-Control-Expose-Headers")->find("Content-Range"), std::string::npos);
  EXPECT_EQ(*p.header("Vary"), "Origin");
  p = ask("GET", "https://attacker.example", &origins);
  EXPECT_EQ(p.header("Access-Control-Allow-Origin"), nullptr);
  EXPECT_EQ(*p.header("Vary"), "Origin");
  p = ask("OPTIONS", "https://player.example", &origins);  // the preflight
  EXPECT_EQ(p.status, 204u);
  EXPECT_NE(p.header("Access-Control-Allow-Headers")->find("Range"), std::string::npos);
  EXPECT_EQ(ask("OPTIONS", "https://attacker.example", &origins).status, 405u);
  EXPECT_EQ(ask("OPTIONS", "", nullptr).status, 405u);
}

TEST(Pages, PicturesAndStaticFiles) {
  Plan p = get("/poster/a%20b.ts?g=4");
  ASSERT_TRUE((p.as<ThumbnailWant>() != nullptr));
  EXPECT_EQ(p.as<ThumbnailWant>()->name, "a b.ts");
  EXPECT_FALSE(p.as<ThumbnailWant>()->strip_frame.has_value());
  EXPECT_EQ(*p.header("Content-Type"), "image/jpeg");
  p = get("/strip/3/%3Cx%3E.mp4");
  ASSERT_TRUE((p.as<ThumbnailWant>() != nullptr));
  EXPECT_EQ(*p.as<ThumbnailWant>()->strip_frame, 3u);
  p = get("/poster/cam%201");
  ASSERT_TRUE((p.as<ThumbnailWant>() != nullptr));
  EXPECT_TRUE(p.as<ThumbnailWant>()->live);
  EXPECT_EQ(*p.header("Cache-Control"), "no-cache");
  for (const char* bad :
       {"/strip/8/a%20b.ts", "/strip/x/a%20b.ts", "/strip/a%20b.ts", "/strip/999/a%20b.ts", "/strip/0/cam%201", "/poster/nope"}) {
    EXPECT_EQ(get(bad).status, 404u) << bad;
    EXPECT_FALSE((get(bad).as<ThumbnailWant>() != nullptr)) << bad;
  }
  EXPECT_EQ(get("/poster/a%2Fb").status, 404u);
  EXPECT_EQ(get("/poster/a/../b").status, 400u);
  p = get("/static/style.css");
  EXPECT_EQ(p.status, 200u);
  EXPECT_EQ(*p.header("Content-Type"), "text/css; charset=utf-8");
  EXPECT_EQ(get("/static/watch.js").status, 200u);
  EXPECT_EQ(get("/static/../catalog.html").status, 404u);
  EXPECT_EQ(get("/static/nope.css").status, 404u);
}

TEST(Pages, ThePagesLoadNothingFromElsewhere) {
  for (const std::string& target : {std::string("/"), std::string("/watch/%3Cx%3E.mp4"), std::string("/static/style.css")}) {
    const std::string text = get(target).text();
    EXPECT_EQ(text.find("http://"), text.find("http://127.0.0.1:8080")) << target << ": only the proxy's own absolute URL";
    EXPECT_EQ(text.find("https://"), std::string::npos) << target;
    EXPECT_EQ(text.find("//fonts."), std::string::npos) << target;
  }
}

TEST(Pages, MissingFilesAndBadTemplatesSayWhich) {
  try {
    WebPages::load("/nonexistent/web");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/web/catalog.html"), std::string::npos) << e.what();
  }
  EXPECT_EQ(format_duration(0), "0:00");
  EXPECT_EQ(format_duration(59'999'999), "0:59");
  EXPECT_EQ(format_duration(3'600'000'000), "1:00:00");
  EXPECT_DOUBLE_EQ(thumbnail_fraction(std::nullopt), 0.1);
  EXPECT_DOUBLE_EQ(thumbnail_fraction(0), 1.0 / 16);
  EXPECT_DOUBLE_EQ(thumbnail_fraction(kStripFrames - 1), 15.0 / 16);
}

// ---------------------------------------------------------------- the Host allow-list

TEST(HostName, TheHostPartCanonical) {
  struct Row {
    const char* field;
    const char* name;  // nullptr: malformed
  };
  const Row rows[] = {
      {"127.0.0.1:8080", "127.0.0.1"},
      {"127.0.0.1", "127.0.0.1"},
      {"LocalHost:8080", "localhost"},
      {"localhost.:8080", "localhost"},  // one trailing dot: the same name
      {"localhost:", "localhost"},       // an empty port is the default one (RFC 3986)
      {"[::1]:8080", "[::1]"},
      {"[0:0:0:0:0:0:0:1]", "[::1]"},
      {"[::ffff:127.0.0.1]:80", "127.0.0.1"},
      {"Attacker.Example:8080", "attacker.example"},
      {"xn--bcher-kva.example", "xn--bcher-kva.example"},
      {"", nullptr},
      {":8080", nullptr},
      {"::1", nullptr},  // IPv6 needs brackets
      {"[::1", nullptr},
      {"[::1]x", nullptr},
      {"[fe80::1%25eth0]", nullptr},  // zone identifiers: browsers send none
      {"[not-v6]", nullptr},
      {"host:http", nullptr},
      {"host:99999", nullptr},
      {"host:123456", nullptr},
      {"a b", nullptr},
      {"evil.example/x", nullptr},
      {"user@host", nullptr},
      {"1.2.3", nullptr},  // digits and dots are IPv4 to a browser
      {"256.0.0.1", nullptr},
  };
  for (const Row& r : rows) {
    const auto name = host_name_of(r.field);
    if (r.name) {
      EXPECT_EQ(name.value_or("(malformed)"), r.name) << r.field;
    } else {
      EXPECT_FALSE(name.has_value()) << r.field << " -> " << name.value_or("");
    }
  }
}

TEST(HostCheck, OnlyTheNamesTheProxyIsReachedBy) {
  // A proxy on 127.0.0.1:8080 (the default), and one started with --allow-host media.lan.
  const HostAllowList loopback = allowed_hosts_for("127.0.0.1", {}, {}, "");
  const HostAllowList lan = allowed_hosts_for("127.0.0.1", {"media.lan", "[2001:db8::5]"}, {}, "");
  struct Row {
    unsigned version;
    std::size_t lines;
    const char* host;
    HostVerdict on_loopback, with_allow_host;
  };
  using V = HostVerdict;
  const Row rows[] = {
      {11, 1, "127.0.0.1:8080", V::allowed, V::allowed},  // the web tests' pages and curl
      {11, 1, "localhost:8080", V::allowed, V::allowed},
      {11, 1, "localhost", V::allowed, V::allowed},
      {11, 1, "[::1]:8080", V::allowed, V::allowed},
      {11, 1, "127.0.0.2:8080", V::allowed, V::allowed},  // loopback, all of 127/8
      {11, 1, "attacker.example", V::not_allowed, V::not_allowed},
      {11, 1, "attacker.example:8080", V::not_allowed, V::not_allowed},
      {11, 1, "localhost.attacker.example", V::not_allowed, V::not_allowed},
      {11, 1, "media.lan:8080", V::not_allowed, V::allowed},
      {11, 1, "MEDIA.LAN", V::not_allowed, V::allowed},
      {11, 1, "[2001:db8::5]:80", V::not_allowed, V::allowed},
      {11, 1, "192.0.2.7:8080", V::not_allowed, V::not_allowed},
      {10, 0, "", V::allowed, V::allowed},  // HTTP/1.0 may leave it out: the default host
      {11, 0, "", V::missing, V::missing},
      {11, 2, "127.0.0.1", V::repeated, V::repeated},
      {11, 1, "", V::malformed, V::malformed},
      {11, 1, "a b", V::malformed, V::malformed},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(check_host(r.version, r.lines, r.host, loopback), r.on_loopback)
        << r.host << " (HTTP/" << r.version << ", " << r.lines << " lines)";
    EXPECT_EQ(check_host(r.version, r.lines, r.host, lan), r.with_allow_host) << r.host << " with --allow-host";
  }
}

TEST(HostCheck, TheListenAddressAndAWildcardsAddresses) {
  const HostAllowList one = allowed_hosts_for("192.0.2.10", {}, {"192.0.2.99"}, "box");
  EXPECT_TRUE(one.allows("192.0.2.10"));
  EXPECT_FALSE(one.allows("192.0.2.99")) << "the host's other addresses reach another socket";
  EXPECT_FALSE(one.allows("box"));
  EXPECT_TRUE(one.allows("127.0.0.1"));
  const HostAllowList any = allowed_hosts_for("0.0.0.0", {}, {"192.0.2.10", "[2001:db8::1]", "bad address"}, "Box");
  EXPECT_TRUE(any.allows("192.0.2.10"));
  EXPECT_TRUE(any.allows("[2001:db8::1]"));
  EXPECT_TRUE(any.allows("box"));
  EXPECT_FALSE(any.allows("0.0.0.0"));
  EXPECT_FALSE(any.allows("attacker.example"));
  EXPECT_TRUE(allowed_hosts_for("::", {}, {"[2001:db8::1]"}, "").allows("[2001:db8::1]"));
  EXPECT_TRUE(allowed_hosts_for("::1", {"::5"}, {}, "").allows("[::5]")) << "--allow-host takes a bare IPv6 address too";
  try {
    allowed_hosts_for("127.0.0.1", {"bad name!"}, {}, "");
    FAIL() << "a bad --allow-host was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--allow-host 'bad name!'"), std::string::npos) << e.what();
  }
}

TEST(HostCheck, RefusalsSayWhatToDo) {
  Plan p = host_refusal(HostVerdict::not_allowed, "Attacker.Example:8080");
  EXPECT_EQ(p.status, 421u);
  EXPECT_EQ(p.text().rfind("421 Misdirected Request: ", 0), 0u) << p.text();
  EXPECT_NE(p.text().find("--allow-host attacker.example"), std::string::npos) << p.text();
  p = host_refusal(HostVerdict::missing, "");
  EXPECT_EQ(p.status, 400u);
  EXPECT_NE(p.text().find("needs a Host header"), std::string::npos) << p.text();
  EXPECT_EQ(host_refusal(HostVerdict::repeated, "a").status, 400u);
  p = host_refusal(HostVerdict::malformed, std::string("a\x01b") + std::string(300, 'x'));
  EXPECT_EQ(p.status, 400u);
  EXPECT_EQ(p.text().find('\x01'), std::string::npos) << "control characters are not echoed";
  EXPECT_LT(p.text().size(), 300u) << "nor is a long value";
}

// ---------------------------------------------------------------- the connection cap

TEST(ConnectionCap, SlotsUpToTheMaxAndBackWhenReleased) {
  ConnectionSlots slots(2);
  auto a = slots.try_take();
  auto b = slots.try_take();
  ASSERT_TRUE(a && b);
  EXPECT_FALSE(slots.try_take()) << "the third connection is refused";
  EXPECT_EQ(slots.in_use(), 2u);
  a.reset();
  EXPECT_EQ(slots.in_use(), 1u);
  auto c = slots.try_take();
  EXPECT_TRUE(c) << "a closed connection's slot is free again";
  ConnectionSlots::Slot moved = std::move(*c);
  c.reset();
  EXPECT_EQ(slots.in_use(), 2u) << "a moved slot is still one slot";
  std::optional<ConnectionSlots::Slot> outlives;
  {
    ConnectionSlots gone(1);
    outlives = gone.try_take();
    ASSERT_TRUE(outlives);
  }
  outlives.reset();  // released after its ConnectionSlots went away: the count is shared (the sanitizer build checks)
}

TEST(ConnectionCap, TheRefusalLogLineAtMostEveryInterval) {
  using namespace std::chrono_literals;
  RateLimitedCount log(10s);
  const auto t0 = RateLimitedCount::Clock::time_point{} + 100s;
  EXPECT_EQ(log.note(t0), std::optional<std::uint64_t>(1)) << "the first one is logged at once";
  EXPECT_FALSE(log.note(t0 + 1s));
  EXPECT_FALSE(log.note(t0 + 9s));
  EXPECT_EQ(log.note(t0 + 10s), std::optional<std::uint64_t>(3)) << "then one line with the count since the last";
  EXPECT_FALSE(log.note(t0 + 11s));
  EXPECT_EQ(log.note(t0 + 60s), std::optional<std::uint64_t>(2));
}

TEST(RangeBlocks, TwoBlocksReadAtChunkBoundariesAndWrittenInOrder) {
  RangeBlocks blocks(100);
  blocks.start(250, 300, nullptr);  // [250, 550): blocks 250-299, 300-399, 400-499, 500-549
  RangeBlocks::Block* a = blocks.next_to_read();
  RangeBlocks::Block* b = blocks.next_to_read();
  ASSERT_TRUE(a && b);
  EXPECT_EQ(blocks.next_to_read(), nullptr) << "two blocks at most: the next Read waits for a write";
  EXPECT_EQ(a->offset, 250u);
  EXPECT_EQ(a->length, 50u);  // the first runs up to the next chunk boundary
  EXPECT_EQ(b->offset, 300u);
  EXPECT_EQ(b->length, 100u);
  ASSERT_NE(a->data(), nullptr);
  // The second landed first: nothing may be written before the first.
  b->state = RangeBlocks::Block::State::ready;
  EXPECT_EQ(blocks.next_to_write(), nullptr);
  a->state = RangeBlocks::Block::State::ready;
  EXPECT_EQ(blocks.next_to_write(), a);
  EXPECT_FALSE(blocks.written(*a));
  EXPECT_EQ(blocks.sent(), 50u);
  RangeBlocks::Block* c = blocks.next_to_read();
  ASSERT_EQ(c, a);  // the written block reads the next chunk
  EXPECT_EQ(c->offset, 400u);
  EXPECT_EQ(blocks.next_to_write(), b);
  EXPECT_FALSE(blocks.written(*b));
  RangeBlocks::Block* d = blocks.next_to_read();
  ASSERT_EQ(d, b);
  EXPECT_EQ(d->offset, 500u);
  EXPECT_EQ(d->length, 50u);
  c->state = d->state = RangeBlocks::Block::State::ready;
  EXPECT_FALSE(blocks.written(*blocks.next_to_write()));
  EXPECT_TRUE(blocks.written(*blocks.next_to_write()));
  EXPECT_EQ(blocks.sent(), 300u);
  EXPECT_EQ(blocks.position(), 550u);
  EXPECT_EQ(blocks.next_to_read(), nullptr);
  // A block whose Read is still landing keeps its memory when the others are given back.
  blocks.start(0, 1000, nullptr);
  RangeBlocks::Block* landing = blocks.next_to_read();
  blocks.release();
  EXPECT_NE(landing->data(), nullptr);
  int reading = 0;
  blocks.each_reading([&](const RangeBlocks::Block&) { ++reading; });
  EXPECT_EQ(reading, 1);
}

TEST(MovieSessionState, TheWholeTable) {
  using S = MovieSessionState;
  using E = MovieSessionEvent;
  struct Case {
    S from;
    E event;
    S to;
  };
  const Case cases[] = {
      {S::opening, E::opened, S::open},   {S::opening, E::failed, S::failed},   {S::opening, E::lost, S::opening},
      {S::open, E::opened, S::open},      {S::open, E::failed, S::failed},      {S::open, E::lost, S::reopening},
      {S::reopening, E::opened, S::open}, {S::reopening, E::failed, S::failed}, {S::reopening, E::lost, S::reopening},
      {S::failed, E::opened, S::failed},  {S::failed, E::failed, S::failed},    {S::failed, E::lost, S::failed},
  };
  for (const Case& c : cases) EXPECT_EQ(to_string(next(c.from, c.event)), std::string(to_string(c.to))) << to_string(c.from);
  EXPECT_TRUE(has_session(S::open));
  EXPECT_FALSE(has_session(S::opening) || has_session(S::reopening) || has_session(S::failed));
  EXPECT_TRUE(must_match(S::reopening)) << "a reopen must find the version it had";
  EXPECT_FALSE(must_match(S::opening));
}

}  // namespace
}  // namespace vod::proxy
