// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy's web pages: the catalog with a poster per movie, and a watch page per movie with an
// HTML5 <video> on the proxy's own /movies/NAME URL and a timeline strip. The HTML, CSS and the one
// small script live in files (proxy/web, installed to <datadir>/rdma-vod/web), read once at start;
// rendering is a pure function of the catalog, unit-tested without a server.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "vod/protocol/catalog_layout.hpp"

namespace vod::proxy {

// Frames in a watch page's timeline strip; /strip/K/NAME serves frame K (0-based).
inline constexpr unsigned kStripFrames = 8;

// Where a thumbnail is taken, as a fraction of the movie's duration: the poster at 10%, strip
// frame K in the middle of the K-th eighth. The keyframe at or before that time is decoded.
double thumbnail_fraction(std::optional<unsigned> strip_frame);

struct StaticFile {
  std::string content_type, body;
};

class WebPages {
 public:
  // Reads catalog.html, watch.html and static/* from `dir`. Throws std::runtime_error naming the
  // file that is missing or whose template does not parse.
  static WebPages load(const std::filesystem::path& dir);
  // The directory the pages are installed in: $VOD_WEB_DIR, else <prefix>/share/rdma-vod/web
  // relative to the running program (which also finds them in the build tree), else the
  // configured install directory.
  static std::filesystem::path default_dir();

  // The page of one folder of the catalog ("" the top): its path as breadcrumbs, its folders, and
  // the movies and channels right in it. nullopt when no name lies below `folder`.
  std::optional<std::string> catalog_page(const proto::Catalog& catalog, const std::string& server, std::string_view folder) const;
  // `host` makes the absolute URL shown for players; `start_seconds` starts the video there
  // (a media fragment, #t=).
  std::string watch_page(const proto::Catalog& catalog, const proto::CatalogEntry& entry, const std::string& host,
                         std::optional<double> start_seconds) const;
  // A title's watch page (catalog_titles.hpp): its multivariant HLS (hls.js, whose menus choose the
  // rendition, audio and subtitles) or ?player=dash.js its DASH manifest; its renditions and tracks
  // listed; the top rendition's poster and strip.
  std::string title_page(const proto::Catalog& catalog, const proto::Title& title, const std::string& host,
                         std::optional<double> start_seconds) const;
  const StaticFile* static_file(const std::string& name) const;

 private:
  std::string catalog_template_, watch_template_;
  std::map<std::string, StaticFile> statics_;
};

bool is_live(const proto::CatalogEntry& e) noexcept;
// Where an entry is served: /movies/NAME, or /live/NAME for a live channel (NAME percent-encoded).
std::string media_path(const proto::CatalogEntry& e);

// "1:02:03", "4:05", "0:00".
std::string format_duration(std::uint64_t duration_us);

}  // namespace vod::proxy
