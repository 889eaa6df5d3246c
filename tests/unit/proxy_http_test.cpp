#include <gtest/gtest.h>

#include "byte_range.hpp"
#include "request_router.hpp"

namespace vod::proxy {
namespace {

using Kind = RangeDecision::Kind;

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
  EXPECT_EQ(decide_range("items=0-5", 1000).kind, Kind::none);       // unknown units are ignored
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
  c.entries.push_back(e);
  e.name = "<x>.mp4";
  e.mime_type = "video/mp4";
  c.entries.push_back(e);
  proto::CatalogEntry live;
  live.name = "cam 1";
  live.size = 1 << 20;
  live.flags = proto::kEntryIsMedia | proto::kEntryLive;
  live.mime_type = "video/mp2t";
  c.entries.push_back(live);
  return c;
}

Plan get(const std::string& target, const std::string& range = "", const std::string& method = "GET") {
  Request r;
  r.method = method;
  r.target = target;
  r.host = "127.0.0.1:8080";
  r.range = range;
  return route(r, catalog(), "127.0.0.1:9");
}

TEST(Router, MovieWholeAndRanges) {
  Plan p = get("/movies/a%20b.ts");
  EXPECT_EQ(p.status, 200u);
  EXPECT_EQ(p.movie, "a b.ts");
  EXPECT_EQ(p.offset, 0u);
  EXPECT_EQ(p.length, 1000u);
  EXPECT_EQ(*p.header("Content-Type"), "video/mp2t");
  EXPECT_EQ(*p.header("Accept-Ranges"), "bytes");
  EXPECT_EQ(*p.header("ETag"), etag_for(catalog(), catalog().entries[0]));
  EXPECT_TRUE(p.send_body);

  p = get("/movies/a%20b.ts", "bytes=100-199");
  EXPECT_EQ(p.status, 206u);
  EXPECT_EQ(p.offset, 100u);
  EXPECT_EQ(p.length, 100u);
  EXPECT_EQ(*p.header("Content-Range"), "bytes 100-199/1000");

  p = get("/movies/a%20b.ts", "bytes=-1");
  EXPECT_EQ(*p.header("Content-Range"), "bytes 999-999/1000");

  p = get("/movies/a%20b.ts", "bytes=1000-");
  EXPECT_EQ(p.status, 416u);
  EXPECT_EQ(*p.header("Content-Range"), "bytes */1000");
  EXPECT_TRUE(p.movie.empty());

  p = get("/movies/a%20b.ts", "bytes=0-1,3-4");
  EXPECT_EQ(p.status, 200u);  // multiple ranges: the whole entity
  EXPECT_EQ(p.length, 1000u);

  p = get("/movies/a%20b.ts", "", "HEAD");
  EXPECT_EQ(p.status, 200u);
  EXPECT_FALSE(p.send_body);
  EXPECT_EQ(p.body_length(), 1000u);
}

TEST(Router, Validators) {
  const std::string etag = etag_for(catalog(), catalog().entries[0]);
  Request r{"GET", "/movies/a%20b.ts", "", "bytes=0-9", "\"stale\"", "", ""};
  Plan p = route(r, catalog(), "h");
  EXPECT_EQ(p.status, 200u) << "If-Range with another validator: the whole movie";
  r.if_range = etag;
  EXPECT_EQ(route(r, catalog(), "h").status, 206u);
  r.if_match = "\"other\"";
  EXPECT_EQ(route(r, catalog(), "h").status, 412u);
  r.if_match = "\"other\", " + etag;
  EXPECT_EQ(route(r, catalog(), "h").status, 206u);
  r.if_match = "*";
  EXPECT_EQ(route(r, catalog(), "h").status, 206u);
  r.if_none_match = etag;
  p = route(r, catalog(), "h");
  EXPECT_EQ(p.status, 304u);
  EXPECT_FALSE(p.send_body);
}

TEST(Router, PagesAndPlaylist) {
  Plan p = get("/");
  EXPECT_EQ(p.status, 200u);
  EXPECT_NE(p.text.find("href=\"/movies/a%20b.ts\""), std::string::npos);
  EXPECT_NE(p.text.find("&lt;x&gt;.mp4"), std::string::npos) << "names are HTML-escaped";
  p = get("/catalog.json");
  EXPECT_EQ(*p.header("Content-Type"), "application/json");
  EXPECT_NE(p.text.find("\"name\":\"a b.ts\""), std::string::npos);
  EXPECT_NE(p.text.find("\"generation\":4"), std::string::npos);
  p = get("/playlist.m3u?x=1");
  EXPECT_EQ(p.text.rfind("#EXTM3U\n", 0), 0u);
  EXPECT_NE(p.text.find("#EXTINF:60,a b.ts\nhttp://127.0.0.1:8080/movies/a%20b.ts\n"), std::string::npos) << p.text;
  Request no_host{"GET", "/playlist.m3u", "", "", "", "", ""};
  EXPECT_NE(route(no_host, catalog(), "127.0.0.1:9").text.find("http://127.0.0.1:9/movies/"), std::string::npos);
}

TEST(Router, LiveChannelsAreEndlessStreamsUnderLive) {
  Plan p = get("/live/cam%201", "bytes=0-99");  // a Range means nothing for an endless stream
  EXPECT_EQ(p.status, 200u);
  EXPECT_EQ(p.live, "cam 1");
  EXPECT_TRUE(p.movie.empty());
  EXPECT_EQ(*p.header("Content-Type"), "video/mp2t");
  EXPECT_EQ(*p.header("Cache-Control"), "no-store");
  EXPECT_EQ(p.header("Content-Range"), nullptr);
  EXPECT_FALSE(get("/live/cam%201", "", "HEAD").send_body);
  EXPECT_EQ(get("/live/nope").status, 404u);
  EXPECT_NE(get("/movies/cam%201").text.find("is a live channel: /live/cam%201"), std::string::npos);
  EXPECT_NE(get("/live/a%20b.ts").text.find("is a movie: /movies/a%20b.ts"), std::string::npos);
  EXPECT_NE(get("/playlist.m3u").text.find("#EXTINF:-1,cam 1\nhttp://127.0.0.1:8080/live/cam%201\n"), std::string::npos);
  EXPECT_NE(get("/").text.find("href=\"/live/cam%201\""), std::string::npos);
  EXPECT_NE(get("/catalog.json").text.find("\"url\":\"/live/cam%201\",\"live\":true"), std::string::npos);
}

TEST(Router, BadRequests) {
  EXPECT_EQ(get("/movies/nope.mp4").status, 404u);
  EXPECT_NE(get("/movies/nope.mp4").text.find("no movie 'nope.mp4'"), std::string::npos);
  EXPECT_EQ(get("/elsewhere").status, 404u);
  EXPECT_EQ(get("/movies/../etc/passwd").status, 400u);
  EXPECT_EQ(get("/movies/..").status, 400u);
  EXPECT_EQ(get("/movies/a%2Fb").status, 400u);
  EXPECT_EQ(get("/movies/a%00b").status, 400u);
  EXPECT_EQ(get("/movies/a%zz").status, 400u);
  EXPECT_EQ(get("http://evil/x").status, 400u);
  Plan p = get("/", "", "DELETE");
  EXPECT_EQ(p.status, 405u);
  EXPECT_EQ(*p.header("Allow"), "GET, HEAD");
  EXPECT_EQ(get("/movies/a%20b.ts", "bytes=abc").status, 416u);
  EXPECT_EQ(get("/movies/a%20b.ts", "bytes=0-99999999999999999999").status, 416u);
}

}  // namespace
}  // namespace vod::proxy
