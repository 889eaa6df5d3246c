// SPDX-License-Identifier: LGPL-2.1-or-later
#include "request_router.hpp"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <utility>
#include <variant>

#include "route_parts.hpp"
#include "vod/client/byte_range.hpp"
#include "vod/client/uri.hpp"
#include "vod/json_text.hpp"
#include "vod/protocol/live_window.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::proxy {

namespace {

using routing::decoded_name;
using routing::hls_request;
using routing::movie;
using routing::named_entry;
using routing::query_value;

const char* reason(unsigned status) {
  switch (status) {
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 412: return "Precondition Failed";
    case 413: return "Content Too Large";
    case 416: return "Range Not Satisfiable";
    case 421: return "Misdirected Request";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    default: return "Error";
  }
}

bool lists_tag(const std::string& header, const std::string& etag) {
  // A comma-separated list of entity tags, or "*". Weak tags never match (strong comparison).
  std::size_t at = 0;
  while (at <= header.size()) {
    std::size_t comma = header.find(',', at);
    if (comma == std::string::npos) comma = header.size();
    std::string item = header.substr(at, comma - at);
    while (!item.empty() && item.front() == ' ') item.erase(0, 1);
    while (!item.empty() && item.back() == ' ') item.pop_back();
    if (item == "*" || item == etag) return true;
    at = comma + 1;
  }
  return false;
}

Plan page(std::string content_type, std::string body) {
  Plan p;
  p.headers = {{"Content-Type", std::move(content_type)}, {"Cache-Control", "no-cache"}};
  p.body = std::move(body);
  return p;
}

std::string movie_url(const std::string& host, const proto::CatalogEntry& e) { return "http://" + host + media_path(e); }

Plan catalog_json(const proto::Catalog& c, const std::optional<std::string>& stale) {
  std::string b = "{\"generation\":" + std::to_string(c.generation) + ",";
  if (stale) b += "\"stale\":true,\"stale_reason\":\"" + json_escape(*stale) + "\",";
  b += "\"movies\":[";
  bool first = true;
  for (std::size_t i = 0; i < c.entries.size(); ++i) {
    const auto& e = c.entries[i];
    const auto dvr = [&](const proto::CatalogEntry& channel) { return c.find(proto::window_entry_name(channel.name)) != nullptr; };
    if (proto::window_channel(e.name)) continue;  // a channel's DVR window: its channel says it has one
    b += std::string(std::exchange(first, false) ? "" : ",") + "{\"name\":\"" + json_escape(e.name) + "\",\"url\":\"" +
         json_escape(media_path(e)) + "\",\"live\":" + (is_live(e) ? "true" : "false") + (is_live(e) && dvr(e) ? ",\"dvr\":true" : "") +
         ",\"size\":" + std::to_string(e.size) + ",\"duration_us\":" + std::to_string(e.duration_us) +
         ",\"bitrate_bps\":" + std::to_string(e.bitrate_bps) + ",\"container\":\"" + json_escape(e.container) + "\",\"mime_type\":\"" +
         json_escape(e.mime_type) + "\",\"video_codec\":\"" + json_escape(e.video_codec) + "\",\"audio_codec\":\"" +
         json_escape(e.audio_codec) + "\",\"width\":" + std::to_string(e.width) + ",\"height\":" + std::to_string(e.height) + "}";
  }
  return page("application/json", b + "]}\n");
}

Plan playlist(const proto::Catalog& c, const std::string& host) {
  std::string b = "#EXTM3U\n";
  for (const auto& e : c.entries) {
    if (proto::window_channel(e.name)) continue;  // a channel's DVR window: played through the channel
    const long seconds = e.duration_us ? static_cast<long>(e.duration_us / 1'000'000) : -1;  // -1: live, or unknown
    b += "#EXTINF:" + std::to_string(seconds) + "," + e.name + "\n" + movie_url(host, e) + "\n";
  }
  return page("audio/x-mpegurl", b);
}

Plan watch(const Request& r, const std::string& path, const Site& site, const std::string& host) {
  // A title's (a folder's) name first: no movie has a title's name, which is a folder of movies.
  const proto::Title* title = nullptr;
  if (auto name = decoded_name(path.substr(7)); std::holds_alternative<std::string>(name))
    title = proto::find_title(site.catalog.titles, std::get<std::string>(name));
  const proto::CatalogEntry* e = nullptr;
  if (!title) {
    auto found = named_entry(path.substr(7), site.catalog);
    if (auto* plan = std::get_if<Plan>(&found)) return std::move(*plan);
    e = std::get<const proto::CatalogEntry*>(found);
  }
  std::optional<double> start;
  const auto t = query_value(r.target, "t");
  if (!t) return error_plan(400, "bad percent-encoding in the query");
  if (!t->empty()) {
    char* end = nullptr;
    const double seconds = std::strtod(t->c_str(), &end);
    if (end == t->c_str() || *end != '\0' || !(seconds >= 0) || seconds > 1e7)
      return error_plan(400, "t='" + *t + "' is not a time in seconds (e.g. ?t=30)");
    start = seconds;
  }
  return page("text/html; charset=utf-8",
              title ? site.pages.title_page(site.catalog, *title, host, start) : site.pages.watch_page(site.catalog, *e, host, start));
}

// "/" or /browse/FOLDER/ (the '/' at the end optional): the folder, decoded, or an error plan.
std::variant<std::string, Plan> browse_folder(const std::string& path) {
  if (path == "/") return std::string();
  std::string encoded = path.substr(8);
  if (encoded.ends_with('/')) encoded.pop_back();
  if (encoded.empty()) return std::string();
  return decoded_name(encoded, "folder");
}

// /poster/NAME or /strip/K/NAME.
Plan picture(const std::string& path, const Site& site) {
  ThumbnailWant want;
  std::string rest;
  if (path.rfind("/poster/", 0) == 0) {
    rest = path.substr(8);
  } else {
    const std::string after = path.substr(7);  // "K/NAME"
    const auto slash = after.find('/');
    const std::string k = after.substr(0, slash);
    if (slash == std::string::npos || k.empty() || k.size() > 2 || k.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(k) >= kStripFrames)
      return error_plan(404, "timeline frames are /strip/K/NAME with K from 0 to " + std::to_string(kStripFrames - 1));
    want.strip_frame = static_cast<unsigned>(std::stoul(k));
    rest = after.substr(slash + 1);
  }
  auto found = named_entry(rest, site.catalog);
  if (auto* plan = std::get_if<Plan>(&found)) return std::move(*plan);
  const proto::CatalogEntry& e = *std::get<const proto::CatalogEntry*>(found);
  want.name = e.name;
  want.live = is_live(e);
  if (want.live && want.strip_frame) return error_plan(404, "a live channel has no timeline strip; its poster is /poster/" + rest);
  Plan p;
  // A movie's pictures change only with the catalog generation (the pages ask with ?g=); a live
  // channel's is the current picture.
  p.headers = {{"Content-Type", "image/jpeg"}, {"Cache-Control", want.live ? "no-cache" : "max-age=3600"}};
  p.body = std::move(want);
  return p;
}

}  // namespace

// ---------------------------------------------------------------- shared with hls_routes.cpp

namespace routing {

Plan movie(const Request& r, const proto::CatalogEntry& e) {
  const std::string etag = etag_for(e);
  Plan p;
  p.headers = {{"Content-Type", e.mime_type.empty() ? "application/octet-stream" : e.mime_type}, {"Accept-Ranges", "bytes"}};
  if (!etag.empty()) p.headers.emplace_back("ETag", etag);
  if (!r.if_match.empty() && (etag.empty() ? r.if_match != "*" : !lists_tag(r.if_match, etag)))
    return error_plan(412, "If-Match does not match " +
                               (etag.empty() ? std::string("(no ETag: the movie's content identity is not known yet)") : etag) +
                               " (the movie changed)");
  if (!r.if_none_match.empty() && !etag.empty() && lists_tag(r.if_none_match, etag)) {
    p.status = 304;
    p.send_body = false;
    return p;
  }
  MovieRange range{e.name, e.content, 0, e.size};
  // If-Range: the Range applies only while the validator still matches; otherwise the whole movie.
  const bool range_applies = !r.range.empty() && (r.if_range.empty() || (!etag.empty() && r.if_range == etag));
  if (range_applies) {
    const client::RangeDecision d = client::decide_range(r.range, e.size);
    using Kind = client::RangeDecision::Kind;
    if (d.kind == Kind::unsatisfiable || d.kind == Kind::invalid) {
      Plan bad = error_plan(416, d.kind == Kind::invalid ? "invalid Range '" + r.range + "'"
                                                         : "Range '" + r.range + "' is outside the " + std::to_string(e.size) + " bytes");
      bad.headers.emplace_back("Content-Range", "bytes */" + std::to_string(e.size));
      bad.headers.emplace_back("Accept-Ranges", "bytes");
      return bad;
    }
    if (d.kind == Kind::single) {
      p.status = 206;
      range.offset = d.first;
      range.length = d.length;
      p.headers.emplace_back("Content-Range", "bytes " + std::to_string(d.first) + "-" + std::to_string(d.first + d.length - 1) + "/" +
                                                  std::to_string(e.size));
    }
  }
  p.body = std::move(range);
  p.send_body = r.method == "GET";
  return p;
}

// The value of `key` in the target's query string ("" when absent), percent-decoded; nullopt when
// its encoding is bad.
std::optional<std::string> query_value(const std::string& target, const std::string& key) {
  const auto q = target.find('?');
  if (q == std::string::npos) return std::string();
  std::size_t at = q + 1;
  while (at <= target.size()) {
    std::size_t amp = target.find('&', at);
    if (amp == std::string::npos) amp = target.size();
    const std::string item = target.substr(at, amp - at);
    const auto eq = item.find('=');
    if (item.substr(0, eq) == key) return client::percent_decode(eq == std::string::npos ? "" : item.substr(eq + 1));
    at = amp + 1;
  }
  return std::string();
}

// The entry a page or picture path names, or an error plan.
std::variant<const proto::CatalogEntry*, Plan> named_entry(const std::string& encoded, const proto::Catalog& catalog) {
  auto decoded = decoded_name(encoded);
  if (auto* plan = std::get_if<Plan>(&decoded)) return std::move(*plan);
  const std::string& name = std::get<std::string>(decoded);
  const proto::CatalogEntry* e = catalog.find(name);
  if (!e) return error_plan(404, "no movie or live channel '" + name + "' in catalog generation " + std::to_string(catalog.generation));
  return e;
}

std::variant<std::string, Plan> decoded_name(const std::string& encoded, const char* what, bool channel) {
  auto decoded = client::percent_decode(encoded);
  if (!decoded) return error_plan(400, "bad percent-encoding in '" + encoded + "'");
  if (const char* why = channel ? proto::invalid_channel_name_reason(*decoded) : proto::invalid_name_reason(*decoded))
    return error_plan(400, std::string("bad ") + what + ": " + why);
  return std::move(*decoded);
}

}  // namespace routing

const std::string& Plan::text() const noexcept {
  static const std::string none;
  const auto* t = as<std::string>();
  return t ? *t : none;
}

std::uint64_t Plan::body_length() const noexcept {
  if (const auto* t = as<std::string>()) return t->size();
  if (const auto* m = as<MovieRange>()) return m->length;
  return 0;
}

const std::string* Plan::header(const std::string& name) const noexcept {
  for (const auto& [k, v] : headers)
    if (k == name) return &v;
  return nullptr;
}

std::string etag_for(const proto::CatalogEntry& e) {
  // The bytes' identity, not the catalog generation: equal on two members (or across a restart)
  // exactly when the bytes are, so If-Range never splices two versions, and a cache keeps its copy
  // over a rescan that changed nothing. Not known yet: no validator at all rather than a weak one.
  if (!e.content.known()) return {};
  std::string hex = e.content.hex();
  return "\"" + hex.substr(hex.find(':') + 1) + "-" + std::to_string(e.size) + "\"";
}

Plan error_plan(unsigned status, const std::string& message) {
  Plan p = page("text/plain; charset=utf-8", std::to_string(status) + " " + reason(status) + ": " + message + "\n");
  p.status = status;
  return p;
}

std::optional<Plan> static_plan(const Request& r, const WebPages& pages) {
  const std::string path = r.target.substr(0, r.target.find_first_of("?#"));
  if (path.rfind("/static/", 0) != 0) return std::nullopt;
  if (r.method != "GET" && r.method != "HEAD") return route(r, Site{proto::Catalog{}, pages, "", ""});  // the 405
  const StaticFile* f = pages.static_file(path.substr(8));
  if (!f) return error_plan(404, "no file " + path);
  Plan p = page(f->content_type, f->body);
  p.headers = {{"Content-Type", f->content_type}, {"Cache-Control", "max-age=300"}};
  p.send_body = r.method == "GET";
  return p;
}

Plan route(const Request& r, const Site& site) {
  const proto::Catalog& catalog = site.catalog;
  if (r.method != "GET" && r.method != "HEAD") {
    Plan p = error_plan(405, "method " + r.method + " is not served here; use GET or HEAD");
    p.headers.emplace_back("Allow", "GET, HEAD");
    return p;
  }
  if (r.target.empty() || r.target.front() != '/') return error_plan(400, "the request target must be an absolute path");
  const std::string path = r.target.substr(0, r.target.find_first_of("?#"));
  const std::string host = r.host.empty() ? site.default_host : r.host;
  Plan p;
  if (path == "/" || path.rfind("/browse/", 0) == 0) {
    auto folder = browse_folder(path);
    if (auto* plan = std::get_if<Plan>(&folder)) return std::move(*plan);
    auto html = site.pages.catalog_page(catalog, site.server, std::get<std::string>(folder));
    if (!html)
      return error_plan(404,
                        "no folder '" + std::get<std::string>(folder) + "' in catalog generation " + std::to_string(catalog.generation));
    p = page("text/html; charset=utf-8", std::move(*html));
  } else if (path.rfind("/watch/", 0) == 0) p = watch(r, path, site, host);
  else if (path.rfind("/poster/", 0) == 0 || path.rfind("/strip/", 0) == 0) p = picture(path, site);
  else if (auto s = static_plan(r, site.pages)) return *s;
  else if (path == "/catalog.json") p = catalog_json(catalog, site.stale);
  else if (path == "/playlist.m3u") p = playlist(catalog, host);
  else if (path.rfind("/hls/", 0) == 0) {
    p = hls_request(r, path, site);
    if (p.as<MovieRange>()) return p;  // a TS segment: the movie's own Range answer, complete
  } else if (path.rfind("/dash/", 0) == 0) {
    p = routing::dash_request(r, path, site);
  } else if (path.rfind("/movies/", 0) == 0 || path.rfind("/live/", 0) == 0) {
    const bool live = path[1] == 'l';
    auto decoded = decoded_name(path.substr(live ? 6 : 8), "name", live);
    if (auto* plan = std::get_if<Plan>(&decoded)) return std::move(*plan);
    const std::string& name = std::get<std::string>(decoded);
    const proto::CatalogEntry* e = catalog.find(name);
    if (!e || is_live(*e) != live) {
      if (e)
        return error_plan(
            404, "'" + name + "' is " + (live ? "a movie: /movies/" : "a live channel: /live/") + client::percent_encode_path(name));
      return error_plan(404, std::string("no ") + (live ? "live channel" : "movie") + " '" + name + "' in catalog generation " +
                                 std::to_string(catalog.generation));
    }
    if (!live) return movie(r, *e);
    // Endless: no length, no ranges, never cached. The sender frames it (chunked for HTTP/1.1).
    p.headers = {{"Content-Type", "video/mp2t"}, {"Cache-Control", "no-store"}, {"Accept-Ranges", "none"}};
    p.body = LiveStream{e->name};
  } else {
    return error_plan(404, "nothing at " + path + "; try / for the catalog");
  }
  // A page made from the catalog last read, while the server does not answer: it says so.
  if (site.stale && !p.as<LiveStream>()) {
    p.headers.emplace_back("X-Catalog-Stale", *site.stale);
    p.headers.emplace_back("Cache-Control", "no-cache");
  }
  p.send_body = r.method == "GET";
  return p;
}

}  // namespace vod::proxy
