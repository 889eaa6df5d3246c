// SPDX-License-Identifier: LGPL-2.1-or-later
#include "web_pages.hpp"

#include <unistd.h>
#include <kainjow/mustache.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "vod/client/catalog_tree.hpp"
#include "vod/client/uri.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::proxy {

namespace mst = kainjow::mustache;

namespace {

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string() + " (the web pages; see --web-dir)");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void check_template(const std::string& text, const std::filesystem::path& p) {
  mst::mustache t{text};
  if (!t.is_valid()) throw std::runtime_error(p.string() + ": not a valid Mustache template: " + t.error_message());
}

std::string content_type_of(const std::filesystem::path& p) {
  const std::string ext = p.extension().string();
  if (ext == ".css") return "text/css; charset=utf-8";
  if (ext == ".js") return "text/javascript; charset=utf-8";
  if (ext == ".svg") return "image/svg+xml";
  if (ext == ".png") return "image/png";
  if (ext == ".jpg") return "image/jpeg";
  if (ext == ".ico") return "image/x-icon";
  return "application/octet-stream";
}

std::string format_size(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= 1'000'000'000) std::snprintf(buf, sizeof buf, "%.1f GB", static_cast<double>(bytes) / 1e9);
  else if (bytes >= 1'000'000) std::snprintf(buf, sizeof buf, "%.1f MB", static_cast<double>(bytes) / 1e6);
  else std::snprintf(buf, sizeof buf, "%.1f kB", static_cast<double>(bytes) / 1e3);
  return buf;
}

// What both pages say about an entry. Keys are set only when there is something to show, so that
// {{#key}} sections drop out otherwise.
mst::data describe(const proto::CatalogEntry& e, std::uint32_t generation) {
  const std::string path = client::percent_encode_path(e.name);
  const std::string g = "?g=" + std::to_string(generation);
  mst::data d;
  d.set("name", e.name);
  d.set("title", e.name);
  d.set("watch_url", "/watch/" + path);
  d.set("poster_url", "/poster/" + path + g);
  d.set("media_url", media_path(e));
  if (is_live(e)) d.set("live", mst::data(true));
  // The facts line: duration · resolution · codecs, each where known.
  std::string facts = e.duration_us ? format_duration(e.duration_us) : "";
  auto add = [&facts](const std::string& fact) {
    if (!fact.empty()) facts += (facts.empty() ? "" : " · ") + fact;
  };
  if (e.width && e.height) add(std::to_string(e.width) + "×" + std::to_string(e.height));
  add(e.video_codec + (!e.video_codec.empty() && !e.audio_codec.empty() ? " / " : "") + e.audio_codec);
  if (!is_live(e)) add(format_size(e.size));
  d.set("facts", facts);
  d.set("container", e.container.empty() ? std::string("raw bytes") : e.container);
  d.set("mime", e.mime_type.empty() ? std::string("application/octet-stream") : e.mime_type);
  return d;
}

// A title's summary: "3 renditions (1080p, 720p, 480p) · 2 audio · 2 subtitles".
std::string title_facts(const proto::Title& t) {
  std::string labels;
  for (const auto& r : t.renditions) labels += (labels.empty() ? "" : ", ") + r.label;
  std::size_t audio = 0, text = 0;
  for (const auto& k : t.tracks) (k.kind == proto::TrackKind::audio ? audio : text) += 1;
  std::string facts = std::to_string(t.renditions.size()) + (t.renditions.size() == 1 ? " rendition (" : " renditions (") + labels + ")";
  if (audio) facts += " · " + std::to_string(audio) + " audio";
  if (text) facts += " · " + std::to_string(text) + " subtitles";
  return facts;
}

// The watch page's timeline strip of movie `e` (a title's: its top rendition), each frame a link
// to `watch_url` at its time.
void add_strip(mst::data& d, const proto::CatalogEntry& e, std::uint32_t generation, const std::string& watch_url) {
  if (is_live(e) || e.duration_us == 0 || e.video_codec.empty()) return;
  mst::data strip{mst::data::type::list};
  const std::string path = client::percent_encode_path(e.name);
  for (unsigned k = 0; k < kStripFrames; ++k) {
    const double seconds = std::floor(thumbnail_fraction(k) * static_cast<double>(e.duration_us) / 1e6);
    mst::data f;
    f.set("url", "/strip/" + std::to_string(k) + "/" + path + "?g=" + std::to_string(generation));
    f.set("watch_url", watch_url);
    f.set("seconds", std::to_string(static_cast<long long>(seconds)));
    f.set("label", format_duration(static_cast<std::uint64_t>(seconds * 1e6)));
    strip.push_back(f);
  }
  d.set("has_strip", mst::data(true));
  d.set("strip", strip);
}

void set_start(mst::data& d, std::optional<double> start_seconds) {
  if (!start_seconds) return;
  char t[32];
  std::snprintf(t, sizeof t, "%.3f", *start_seconds);
  d.set("start", std::string(t));  // watch.js seeks there: a media fragment (#t=) is not honoured for HLS
  d.set("fragment", "#t=" + std::string(t));
}

// A folder's page: "/" for the top.
std::string folder_path(std::string_view folder) { return folder.empty() ? "/" : "/browse/" + client::percent_encode_path(folder) + "/"; }

}  // namespace

bool is_live(const proto::CatalogEntry& e) noexcept { return (e.flags & proto::kEntryLive) != 0; }

std::string media_path(const proto::CatalogEntry& e) { return (is_live(e) ? "/live/" : "/movies/") + client::percent_encode_path(e.name); }

double thumbnail_fraction(std::optional<unsigned> strip_frame) {
  if (!strip_frame) return 0.1;
  return (2.0 * *strip_frame + 1.0) / (2.0 * kStripFrames);
}

std::string format_duration(std::uint64_t duration_us) {
  const std::uint64_t s = duration_us / 1'000'000;
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60), static_cast<unsigned long long>(s % 60));
  else std::snprintf(buf, sizeof buf, "%llu:%02llu", static_cast<unsigned long long>(s / 60), static_cast<unsigned long long>(s % 60));
  return buf;
}

WebPages WebPages::load(const std::filesystem::path& dir) {
  WebPages w;
  w.catalog_template_ = read_file(dir / "catalog.html");
  check_template(w.catalog_template_, dir / "catalog.html");
  w.watch_template_ = read_file(dir / "watch.html");
  check_template(w.watch_template_, dir / "watch.html");
  std::error_code ec;
  for (const auto& f : std::filesystem::directory_iterator(dir / "static", ec))
    if (f.is_regular_file()) w.statics_[f.path().filename().string()] = {content_type_of(f.path()), read_file(f.path())};
  if (ec) throw std::runtime_error("cannot list " + (dir / "static").string() + ": " + ec.message());
  return w;
}

std::filesystem::path WebPages::default_dir() {
  if (const char* env = std::getenv("VOD_WEB_DIR"); env && *env) return env;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    // <prefix>/bin/vod-proxy -> <prefix>/share/rdma-vod/web; the build tree mirrors that layout.
    const auto beside = exe.parent_path().parent_path() / "share" / "rdma-vod" / "web";
    if (std::filesystem::exists(beside / "catalog.html", ec)) return beside;
  }
  return VOD_WEB_INSTALL_DIR;
}

const StaticFile* WebPages::static_file(const std::string& name) const {
  const auto it = statics_.find(name);
  return it == statics_.end() ? nullptr : &it->second;
}

std::optional<std::string> WebPages::catalog_page(const proto::Catalog& catalog, const std::string& server, std::string_view folder) const {
  const client::CatalogTree tree(catalog);
  const client::CatalogTree::Folder* here = tree.folder(folder);
  if (!here) return std::nullopt;
  mst::data movies{mst::data::type::list};
  for (std::size_t i : here->entries) {
    mst::data m = describe(catalog.entries[i], catalog.generation);
    m.set("title", std::string(client::leaf_of(catalog.entries[i].name)));
    movies.push_back(m);
  }
  const std::string prefix = folder.empty() ? "" : std::string(folder) + "/";
  mst::data folders{mst::data::type::list};
  for (const auto& [name, count] : here->folders) {
    mst::data f;
    f.set("name", name);
    f.set("url", folder_path(prefix + name));
    f.set("count", std::to_string(count) + (count == 1 ? " title" : " titles"));
    // A folder that is a title (its files the renditions) is shown as one: its poster (the top
    // rendition's) and watch page; the folder's own page still lists the files.
    if (const proto::Title* t = proto::find_title(catalog.titles, prefix + name)) {
      const std::string path = client::percent_encode_path(t->name);
      f.set("watch_url", "/watch/" + path);
      f.set("poster_url", "/poster/" + client::percent_encode_path(catalog.entries.at(t->renditions.front().entry).name) +
                              "?g=" + std::to_string(catalog.generation));
      f.set("facts", title_facts(*t));
    }
    folders.push_back(f);
  }
  // Breadcrumbs: the top, then each folder on the way down to this one (the last is not a link).
  mst::data crumbs{mst::data::type::list};
  for (std::size_t from = 0; !folder.empty() && from <= folder.size();) {
    const auto slash = std::min(folder.find('/', from), folder.size());
    mst::data c;
    c.set("name", std::string(folder.substr(from, slash - from)));
    if (slash < folder.size()) c.set("url", folder_path(folder.substr(0, slash)));
    crumbs.push_back(c);
    from = slash + 1;
  }
  mst::data d;
  d.set("server", server);
  d.set("generation", std::to_string(catalog.generation));
  d.set("count", std::to_string(catalog.entries.size()) + (catalog.entries.size() == 1 ? " title" : " titles"));
  d.set("movies", movies);
  d.set("folders", folders);
  if (!folder.empty()) {
    d.set("crumbs", crumbs);
    d.set("folder", std::string(folder));
  }
  mst::mustache t{catalog_template_};
  return t.render(d);
}

std::string WebPages::watch_page(const proto::Catalog& catalog, const proto::CatalogEntry& e, const std::string& host,
                                 std::optional<double> start_seconds) const {
  mst::data d = describe(e, catalog.generation);
  d.set("absolute_url", "http://" + host + media_path(e));
  const bool has_media = !e.video_codec.empty() || !e.audio_codec.empty();
  if (is_live(e)) {
    // A live channel plays as LL-HLS (LiveHlsService); browsers play no bare MPEG-TS. With a DVR
    // window (vod-server --live-dvr) it plays the window's playlist instead, with a scrub bar over
    // the window and a button back to live.
    d.set("playable", mst::data(true));
    const std::string base = "/hls/live/" + client::percent_encode_path(e.name);
    const bool dvr = catalog.find(proto::window_entry_name(e.name)) != nullptr;
    d.set("hls_url", base + (dvr ? "/dvr.m3u8" : "/index.m3u8"));
    if (dvr) d.set("dvr", mst::data(true));
  } else if (has_media) {
    d.set("playable", mst::data(true));
    // The browser's own HLS first (/hls/NAME/master.m3u8: a TS movie's segments are byte ranges of
    // the file, an MP4's or Matroska's are remuxed to fMP4), then the file itself where the browser
    // may play it progressively (not MPEG-TS, which no browser plays bare).
    d.set("hls_url", "/hls/" + client::percent_encode_path(e.name) + "/master.m3u8");
    if (e.container != "mpegts") d.set("progressive", mst::data(true));
    set_start(d, start_seconds);
  } else {
    d.set("why_not", std::string("this file: it is not audio or video that libavformat recognises"));
  }
  add_strip(d, e, catalog.generation, "/watch/" + client::percent_encode_path(e.name));
  mst::mustache t{watch_template_};
  return t.render(d);
}

std::string WebPages::title_page(const proto::Catalog& catalog, const proto::Title& t, const std::string& host,
                                 std::optional<double> start_seconds) const {
  // The top rendition stands for the title: its poster, strip, duration and codecs.
  const proto::CatalogEntry& top = catalog.entries.at(t.renditions.front().entry);
  const std::string path = client::percent_encode_path(t.name);
  mst::data d = describe(top, catalog.generation);
  d.set("name", t.name);
  d.set("watch_url", "/watch/" + path);
  d.set("facts", title_facts(t) + (top.duration_us ? " · " + format_duration(top.duration_us) : ""));
  d.set("container", std::string("title"));
  d.set("mime", std::string("DASH"));  // the note: "plays neither HLS nor DASH"
  d.set("playable", mst::data(true));
  d.set("is_title", mst::data(true));
  d.set("hls_url", "/hls/" + path + "/master.m3u8");
  d.set("dash_url", "/dash/" + path + "/manifest.mpd");
  d.set("absolute_url", "http://" + host + "/hls/" + path + "/master.m3u8");
  d.set("media_url", "/hls/" + path + "/master.m3u8");
  set_start(d, start_seconds);
  mst::data renditions{mst::data::type::list};
  for (const auto& r : t.renditions) {
    const proto::CatalogEntry& e = catalog.entries.at(r.entry);
    mst::data m;
    m.set("label", r.label);
    std::string facts = e.width && e.height ? std::to_string(e.width) + "×" + std::to_string(e.height) : "";
    if (e.duration_us) facts += (facts.empty() ? "" : " · ") + std::to_string(e.size * 8'000 / e.duration_us) + " kb/s";
    m.set("facts", facts);
    m.set("url", media_path(e));
    renditions.push_back(m);
  }
  d.set("renditions", renditions);
  mst::data audio{mst::data::type::list}, text{mst::data::type::list};
  std::size_t audio_count = 0, text_count = 0;
  for (const auto& k : t.tracks) {
    mst::data m;
    m.set("language", k.language.empty() ? std::string("und") : k.language);
    m.set("label", (k.name.empty() ? (k.language.empty() ? std::string("unknown language") : k.language) : k.name) +
                       (k.codec.empty() ? "" : " (" + k.codec + ")") + (k.is_default ? ", default" : ""));
    (k.kind == proto::TrackKind::audio ? audio : text).push_back(m);
    ++(k.kind == proto::TrackKind::audio ? audio_count : text_count);
  }
  d.set("audio", audio);
  d.set("subtitles", text);
  if (audio_count) d.set("has_audio", mst::data(true));
  if (text_count) d.set("has_subtitles", mst::data(true));
  add_strip(d, top, catalog.generation, "/watch/" + path);
  mst::mustache m{watch_template_};
  return m.render(d);
}

}  // namespace vod::proxy
