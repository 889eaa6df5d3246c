// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy over a library that is a tree: names with folders in every route, the links the pages
// make for them, and the folder pages.
#include <gtest/gtest.h>

#include "request_router.hpp"
#include "web_pages.hpp"

namespace vod::proxy {
namespace {

const std::string kNested = "Films/Läder (2024)/Läder (2024) - 720p #1 50% ?.mp4";
const std::string kNestedUrl = "Films/L%C3%A4der%20%282024%29/L%C3%A4der%20%282024%29%20-%20720p%20%231%2050%25%20%3F.mp4";

// 600 bytes of folder name and a file (built by append: GCC 12 warns falsely about string(n, c) + "...").
std::string long_name() {
  std::string s(200, 'x');
  for (int i = 0; i < 2; ++i) s.append("/").append(199, 'y');
  return s.append("/long.ts");
}

proto::Catalog catalog() {
  proto::Catalog c;
  c.generation = 9;
  for (const std::string& name :
       {kNested, std::string("Films/Other.ts"), std::string("Series/Show/Season 01/E01.ts"), std::string("top.ts"), long_name()}) {
    proto::CatalogEntry e;
    e.name = name;
    e.size = 5000;
    e.duration_us = 10'000'000;
    const bool mp4 = name.ends_with(".mp4");
    e.container = mp4 ? "mp4" : "mpegts";
    e.mime_type = mp4 ? "video/mp4" : "video/mp2t";
    e.video_codec = "h264";
    c.entries.push_back(e);
  }
  return c;
}

// The catalog with the folder of kNested a title of one rendition, an audio and a subtitle track.
proto::Catalog titled_catalog() {
  proto::Catalog c = catalog();
  proto::Title t;
  t.name = "Films/Läder (2024)";
  t.renditions = {{0, "720p #1 50% ?", 25, 1}};
  proto::TitleTrack audio{proto::TrackKind::audio, true, "en", "aac", "", 0, 1, 2};
  proto::TitleTrack text{proto::TrackKind::subtitles, false, "sv", "webvtt", "<b>Svenska</b>", 1, proto::kWholeFile};
  t.tracks = {audio, text};
  c.titles = {t};
  return c;
}

Plan get(const std::string& target, const std::string& range = "", bool titled = false) {
  static const WebPages pages = WebPages::load(VOD_TEST_WEB_DIR);
  Request r;
  r.method = "GET";
  r.target = target;
  r.host = "127.0.0.1:8080";
  r.range = range;
  const proto::Catalog c = titled ? titled_catalog() : catalog();
  return route(r, Site{c, pages, "127.0.0.1:9", "rdma://10.0.0.1:7471"});
}

TEST(ProxyTree, NestedNamesAnswerOnEveryRoute) {
  Plan p = get("/movies/" + kNestedUrl, "bytes=100-199");
  EXPECT_EQ(p.status, 206u);
  ASSERT_TRUE(p.as<MovieRange>());
  EXPECT_EQ(p.as<MovieRange>()->name, kNested);
  EXPECT_EQ(*p.header("Content-Range"), "bytes 100-199/5000");
  EXPECT_EQ(get("/movies/Films%2FOther.ts").status, 200u);  // %2F is a '/' too

  p = get("/hls/" + kNestedUrl + "/master.m3u8");
  ASSERT_TRUE(p.as<HlsWant>()) << p.status << " " << p.text();
  EXPECT_EQ(p.as<HlsWant>()->name, kNested);
  EXPECT_EQ(p.as<HlsWant>()->kind, HlsWant::Kind::multivariant);
  p = get("/hls/Series/Show/Season%2001/E01.ts/index.m3u8");
  ASSERT_TRUE(p.as<HlsWant>());
  EXPECT_EQ(p.as<HlsWant>()->movie_uri, "/movies/Series/Show/Season%2001/E01.ts");  // a TS movie's segments: itself
  EXPECT_EQ(get("/hls/Series/Show/Season%2001/E01.ts/movie.ts", "bytes=0-187").status, 206u);
  EXPECT_EQ(get("/hls/Films/index.m3u8").status, 404u);  // a folder is not a movie
  std::string long_hls = "/hls/";
  long_hls.append(long_name()).append("/index.m3u8");
  ASSERT_TRUE(get(long_hls).as<HlsWant>());
  EXPECT_EQ(get(long_hls).as<HlsWant>()->name, long_name());

  p = get("/watch/" + kNestedUrl);
  EXPECT_EQ(p.status, 200u);
  EXPECT_NE(p.text().find("/hls/" + kNestedUrl + "/master.m3u8"), std::string::npos) << p.text();
  EXPECT_NE(p.text().find("/movies/" + kNestedUrl), std::string::npos);
  EXPECT_NE(p.text().find("/strip/3/" + kNestedUrl + "?g=9"), std::string::npos);
  EXPECT_TRUE(get("/poster/" + kNestedUrl).as<ThumbnailWant>());
  EXPECT_EQ(get("/poster/" + kNestedUrl).as<ThumbnailWant>()->name, kNested);
  EXPECT_EQ(get("/strip/3/" + kNestedUrl).as<ThumbnailWant>()->name, kNested);

  p = get("/playlist.m3u");
  EXPECT_NE(p.text().find("http://127.0.0.1:8080/movies/" + kNestedUrl + "\n"), std::string::npos) << p.text();
}

TEST(ProxyTree, FolderPagesShowBreadcrumbsFoldersAndTheirMovies) {
  Plan top = get("/");
  EXPECT_EQ(top.status, 200u);
  EXPECT_NE(top.text().find("<a href=\"/browse/Films/\">Films/</a>"), std::string::npos) << top.text();
  EXPECT_NE(top.text().find("<a href=\"/browse/Series/\">Series/</a>"), std::string::npos);
  EXPECT_NE(top.text().find("data-name=\"top.ts\""), std::string::npos);
  EXPECT_EQ(top.text().find("data-name=\"Films/Other.ts\""), std::string::npos);  // in its folder, not here
  EXPECT_NE(top.text().find("2 titles"), std::string::npos);                      // below Films

  Plan films = get("/browse/Films/");
  EXPECT_EQ(films.status, 200u);
  EXPECT_NE(films.text().find("<a href=\"/\">all</a> / <span aria-current=\"page\">Films</span>"), std::string::npos) << films.text();
  EXPECT_NE(films.text().find("<a href=\"/browse/Films/L%C3%A4der%20%282024%29/\">Läder (2024)/</a>"), std::string::npos);
  EXPECT_NE(films.text().find("data-name=\"Films/Other.ts\""), std::string::npos);
  EXPECT_NE(films.text().find(">Other.ts</a></h2>"), std::string::npos);  // the card says its own name

  Plan season = get("/browse/Series/Show/Season%2001");
  EXPECT_EQ(season.status, 200u);
  EXPECT_NE(season.text().find("<a href=\"/browse/Series/\">Series</a> / <a href=\"/browse/Series/Show/\">Show</a> / "
                               "<span aria-current=\"page\">Season 01</span>"),
            std::string::npos)
      << season.text();
  EXPECT_NE(season.text().find("href=\"/watch/Series/Show/Season%2001/E01.ts\""), std::string::npos);
  EXPECT_EQ(get("/browse/Nope/").status, 404u);
  EXPECT_EQ(get("/browse/top.ts/").status, 404u);  // a movie, not a folder
  EXPECT_EQ(get("/browse/Films/../Series/").status, 400u);
  EXPECT_EQ(get("/browse/").status, 200u);
}

TEST(ProxyTree, ATitleIsACardAndAWatchPageWithItsTracks) {
  const std::string title_url = "Films/L%C3%A4der%20%282024%29";
  Plan films = get("/browse/Films/", "", true);
  EXPECT_EQ(films.status, 200u);
  const std::string& html = films.text();
  EXPECT_NE(html.find("class=\"card title\""), std::string::npos) << html;
  EXPECT_NE(html.find("<h2><a href=\"/watch/" + title_url + "\">Läder (2024)</a></h2>"), std::string::npos) << html;
  EXPECT_NE(html.find("src=\"/poster/" + kNestedUrl + "?g=9\""), std::string::npos);               // its top rendition's
  EXPECT_NE(html.find("1 rendition (720p #1 50% ?) · 1 audio · 1 subtitles"), std::string::npos);  // and its files:
  EXPECT_NE(html.find("<a href=\"/browse/" + title_url + "/\">files</a>"), std::string::npos);
  EXPECT_EQ(get("/browse/Films/").text().find("card title"), std::string::npos);  // no title, a folder

  Plan watch = get("/watch/" + title_url + "?t=3", "", true);
  EXPECT_EQ(watch.status, 200u);
  const std::string& page = watch.text();
  EXPECT_NE(page.find("<source src=\"/hls/" + title_url + "/master.m3u8\""), std::string::npos) << page;
  EXPECT_NE(page.find("data-title=\"Films/Läder (2024)\" data-dash=\"/dash/" + title_url + "/manifest.mpd\""), std::string::npos);
  EXPECT_NE(page.find("data-start=\"3.000\""), std::string::npos);
  EXPECT_NE(page.find("<a href=\"/movies/" + kNestedUrl + "\">720p #1 50% ?</a>"), std::string::npos);
  EXPECT_NE(page.find("<span lang=\"en\">en (aac), default</span>"), std::string::npos);
  EXPECT_NE(page.find("<span lang=\"sv\">&lt;b&gt;Svenska&lt;/b&gt; (webvtt)</span>"), std::string::npos);  // escaped
  EXPECT_EQ(page.find("<b>Svenska"), std::string::npos);
  EXPECT_NE(page.find("/strip/7/" + kNestedUrl + "?g=9"), std::string::npos);
  EXPECT_NE(page.find("href=\"/watch/" + title_url + "?t="), std::string::npos);  // the strip seeks the title
  EXPECT_EQ(get("/watch/" + title_url).status, 404u);                             // not a title: a folder
  EXPECT_EQ(get("/watch/" + title_url + "?t=x", "", true).status, 400u);
}

}  // namespace
}  // namespace vod::proxy
