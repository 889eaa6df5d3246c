#include "request_router.hpp"

#include <cstdio>

#include "byte_range.hpp"
#include "vod/client/uri.hpp"
#include "vod/json_text.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::proxy {

namespace {

const char* reason(unsigned status) {
  switch (status) {
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 412: return "Precondition Failed";
    case 416: return "Range Not Satisfiable";
    case 502: return "Bad Gateway";
    default: return "Error";
  }
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
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
  p.text = std::move(body);
  return p;
}

bool is_live(const proto::CatalogEntry& e) { return (e.flags & proto::kEntryLive) != 0; }

// Where an entry is served: /movies/NAME, or /live/NAME for a live channel.
std::string path_of(const proto::CatalogEntry& e) { return (is_live(e) ? "/live/" : "/movies/") + client::percent_encode(e.name); }

std::string movie_url(const std::string& host, const proto::CatalogEntry& e) { return "http://" + host + path_of(e); }

Plan catalog_html(const proto::Catalog& c) {
  std::string b = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rdma-vod catalog</title></head><body>\n";
  b += "<h1>rdma-vod catalog, generation " + std::to_string(c.generation) + "</h1>\n";
  b += "<p><a href=\"/playlist.m3u\">playlist.m3u</a> &middot; <a href=\"/catalog.json\">catalog.json</a></p>\n<table>\n";
  b += "<tr><th>movie</th><th>size</th><th>duration</th><th>type</th></tr>\n";
  for (const auto& e : c.entries) {
    b += "<tr><td><a href=\"" + path_of(e) + "\">" + html_escape(e.name) + "</a></td><td>" +
         (is_live(e) ? std::string("live") : std::to_string(e.size)) + "</td><td>" +
         (is_live(e) ? std::string("live") : std::to_string(e.duration_us / 1'000'000) + " s") + "</td><td>" + html_escape(e.mime_type) +
         "</td></tr>\n";
  }
  return page("text/html; charset=utf-8", b + "</table></body></html>\n");
}

Plan catalog_json(const proto::Catalog& c) {
  std::string b = "{\"generation\":" + std::to_string(c.generation) + ",\"movies\":[";
  for (std::size_t i = 0; i < c.entries.size(); ++i) {
    const auto& e = c.entries[i];
    b += std::string(i ? "," : "") + "{\"name\":\"" + json_escape(e.name) + "\",\"url\":\"" + json_escape(path_of(e)) +
         "\",\"live\":" + (is_live(e) ? "true" : "false") + ",\"size\":" + std::to_string(e.size) + ",\"duration_us\":" + std::to_string(e.duration_us) +
         ",\"bitrate_bps\":" + std::to_string(e.bitrate_bps) + ",\"container\":\"" + json_escape(e.container) + "\",\"mime_type\":\"" +
         json_escape(e.mime_type) + "\",\"video_codec\":\"" + json_escape(e.video_codec) + "\",\"audio_codec\":\"" +
         json_escape(e.audio_codec) + "\",\"width\":" + std::to_string(e.width) + ",\"height\":" + std::to_string(e.height) + "}";
  }
  return page("application/json", b + "]}\n");
}

Plan playlist(const proto::Catalog& c, const std::string& host) {
  std::string b = "#EXTM3U\n";
  for (const auto& e : c.entries) {
    const long seconds = e.duration_us ? static_cast<long>(e.duration_us / 1'000'000) : -1;  // -1: live, or unknown
    b += "#EXTINF:" + std::to_string(seconds) + "," + e.name + "\n" + movie_url(host, e) + "\n";
  }
  return page("audio/x-mpegurl", b);
}

Plan movie(const Request& r, const proto::Catalog& c, const proto::CatalogEntry& e) {
  const std::string etag = etag_for(c, e);
  Plan p;
  p.headers = {{"Content-Type", e.mime_type.empty() ? "application/octet-stream" : e.mime_type}, {"Accept-Ranges", "bytes"}, {"ETag", etag}};
  if (!r.if_match.empty() && !lists_tag(r.if_match, etag))
    return error_plan(412, "If-Match does not match " + etag + " (the movie changed, or the catalog generation did)");
  if (!r.if_none_match.empty() && lists_tag(r.if_none_match, etag)) {
    p.status = 304;
    p.send_body = false;
    return p;
  }
  p.movie = e.name;
  p.offset = 0;
  p.length = e.size;
  // If-Range: the Range applies only while the validator still matches; otherwise the whole movie.
  const bool range_applies = !r.range.empty() && (r.if_range.empty() || r.if_range == etag);
  if (range_applies) {
    const RangeDecision d = decide_range(r.range, e.size);
    using Kind = RangeDecision::Kind;
    if (d.kind == Kind::unsatisfiable || d.kind == Kind::invalid) {
      Plan bad = error_plan(416, d.kind == Kind::invalid ? "invalid Range '" + r.range + "'"
                                                         : "Range '" + r.range + "' is outside the " + std::to_string(e.size) + " bytes");
      bad.headers.emplace_back("Content-Range", "bytes */" + std::to_string(e.size));
      bad.headers.emplace_back("Accept-Ranges", "bytes");
      return bad;
    }
    if (d.kind == Kind::single) {
      p.status = 206;
      p.offset = d.first;
      p.length = d.length;
      p.headers.emplace_back("Content-Range", "bytes " + std::to_string(d.first) + "-" + std::to_string(d.first + d.length - 1) + "/" +
                                                  std::to_string(e.size));
    }
  }
  p.send_body = r.method == "GET";
  return p;
}

}  // namespace

const std::string* Plan::header(const std::string& name) const noexcept {
  for (const auto& [k, v] : headers)
    if (k == name) return &v;
  return nullptr;
}

std::string etag_for(const proto::Catalog& c, const proto::CatalogEntry& e) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "\"g%u-%016llx-%llu\"", c.generation, static_cast<unsigned long long>(proto::name_hash(e.name)),
                static_cast<unsigned long long>(e.size));
  return buf;
}

Plan error_plan(unsigned status, const std::string& message) {
  Plan p = page("text/plain; charset=utf-8", std::to_string(status) + " " + reason(status) + ": " + message + "\n");
  p.status = status;
  return p;
}

Plan route(const Request& r, const proto::Catalog& catalog, const std::string& default_host) {
  if (r.method != "GET" && r.method != "HEAD") {
    Plan p = error_plan(405, "method " + r.method + " is not served here; use GET or HEAD");
    p.headers.emplace_back("Allow", "GET, HEAD");
    return p;
  }
  if (r.target.empty() || r.target.front() != '/') return error_plan(400, "the request target must be an absolute path");
  const std::string path = r.target.substr(0, r.target.find_first_of("?#"));
  const std::string host = r.host.empty() ? default_host : r.host;
  Plan p;
  if (path == "/") p = catalog_html(catalog);
  else if (path == "/catalog.json") p = catalog_json(catalog);
  else if (path == "/playlist.m3u") p = playlist(catalog, host);
  else if (path.rfind("/movies/", 0) == 0 || path.rfind("/live/", 0) == 0) {
    const bool live = path[1] == 'l';
    const auto decoded = client::percent_decode(path.substr(live ? 6 : 8));
    if (!decoded) return error_plan(400, "bad percent-encoding in " + path);
    const std::string& name = *decoded;
    if (const char* why = proto::invalid_name_reason(name)) return error_plan(400, std::string("bad name: ") + why);
    const proto::CatalogEntry* e = catalog.find(name);
    if (!e || is_live(*e) != live) {
      if (e) return error_plan(404, "'" + name + "' is " + (live ? "a movie: /movies/" : "a live channel: /live/") + client::percent_encode(name));
      return error_plan(404, std::string("no ") + (live ? "live channel" : "movie") + " '" + name + "' in catalog generation " +
                                 std::to_string(catalog.generation));
    }
    if (!live) return movie(r, catalog, *e);
    // Endless: no length, no ranges, never cached. The sender frames it (chunked for HTTP/1.1).
    p.headers = {{"Content-Type", "video/mp2t"}, {"Cache-Control", "no-store"}, {"Accept-Ranges", "none"}};
    p.live = e->name;
  } else {
    return error_plan(404, "nothing at " + path + "; try / for the catalog");
  }
  p.send_body = r.method == "GET";
  return p;
}

}  // namespace vod::proxy
