// SPDX-License-Identifier: LGPL-2.1-or-later
// The router's /hls/ paths (route() hands them over): a movie's playlists and its pieces, made from
// its facts by hls_plan()/hls_piece_plan() once HlsService has them; a live channel's LL-HLS
// playlist, segments and parts, answered by LiveHlsService through live_hls_plan(). Pure, as
// route() is.
#include <algorithm>
#include <cctype>
#include <string>

#include "route_parts.hpp"
#include "vod/client/uri.hpp"
#include "vod/media/subtitles.hpp"

namespace vod::proxy {

namespace {

using routing::audio_tracks;
using routing::dvr_request;
using routing::hls_error;
using routing::movie;
using routing::named_entry;
using routing::query_value;
using routing::remuxed_to_fmp4;
using routing::subtitle_tracks;

// A decimal number of at most `digits` digits without a leading zero ("0" itself is one).
std::optional<std::uint64_t> decimal(const std::string& text, std::size_t digits) {
  if (text.empty() || text.size() > digits || text.find_first_not_of("0123456789") != std::string::npos ||
      (text.size() > 1 && text[0] == '0'))
    return std::nullopt;
  return std::stoull(text);
}

// "iframe-N.m4s" -> N.
std::optional<unsigned> iframe_number(const std::string& file) {
  if (file.rfind("iframe-", 0) != 0 || !file.ends_with(".m4s")) return std::nullopt;
  const auto n = decimal(file.substr(7, file.size() - 11), 6);
  if (!n) return std::nullopt;
  return static_cast<unsigned>(*n);
}

// "seg-N.m4s" (or `extension`) -> N.
std::optional<unsigned> segment_number(const std::string& file, const char* extension = ".m4s") {
  if (file.rfind("seg-", 0) != 0 || !file.ends_with(extension)) return std::nullopt;
  const auto n = decimal(file.substr(4, file.size() - 8), 6);
  if (!n) return std::nullopt;
  return static_cast<unsigned>(*n);
}

// The URI of a TS movie's segments in its playlist: the movie itself, /movies/NAME, when its name
// ends in an extension players take segments by (ffmpeg's HLS demuxer refuses others, for safety),
// else /hls/NAME/movie.ts, the same bytes by the same Range path under a name that does.
std::string ts_segments_uri(const proto::CatalogEntry& e) {
  std::string lower = e.name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const char* ext : {".ts", ".mpegts", ".mpg", ".mpeg"})
    if (lower.ends_with(ext)) return media_path(e);
  return "movie.ts";
}

// /hls/live/NAME/index.m3u8[?_HLS_msn=M[&_HLS_part=P]], /hls/live/NAME/seg-M.ts, /hls/live/NAME/part-M.P.ts.
Plan live_hls_request(const Request& r, const std::string& rest, const Site& site) {
  const auto slash = rest.find('/');
  const std::string file = slash == std::string::npos ? "" : rest.substr(slash + 1);
  auto found = named_entry(rest.substr(0, slash), site.catalog);
  if (auto* plan = std::get_if<Plan>(&found)) return std::move(*plan);
  const proto::CatalogEntry& e = *std::get<const proto::CatalogEntry*>(found);
  if (!is_live(e))
    return error_plan(404, "'" + e.name + "' is a movie: its playlist is /hls/" + client::percent_encode_path(e.name) + "/index.m3u8");
  if (file == "dvr.m3u8" || file == "dvr.ts") return dvr_request(r, e, file, site);
  LiveHlsWant w;
  w.channel = e.name;
  const auto numbered = [&](const char* prefix, std::size_t numbers) -> bool {
    const std::string p(prefix);
    if (file.rfind(p, 0) != 0 || !file.ends_with(".ts")) return false;
    const std::string middle = file.substr(p.size(), file.size() - p.size() - 3);
    const auto dot = middle.find('.');
    if ((numbers == 1) != (dot == std::string::npos)) return false;
    const auto msn = decimal(middle.substr(0, dot), 18);
    if (!msn) return false;
    w.msn = *msn;
    if (numbers == 1) return true;
    const auto part = decimal(middle.substr(dot + 1), 6);
    if (!part) return false;
    w.part = static_cast<std::size_t>(*part);
    return true;
  };
  Plan p;
  if (file == "index.m3u8") {
    const auto msn = query_value(r.target, "_HLS_msn"), part = query_value(r.target, "_HLS_part");
    if (!msn || !part) return error_plan(400, "bad percent-encoding in the query");
    if (!part->empty() && msn->empty()) return error_plan(400, "_HLS_part needs _HLS_msn (rfc8216bis 6.2.5.2)");
    if (!msn->empty()) {
      const auto m = decimal(*msn, 18);
      const auto k = part->empty() ? std::optional<std::uint64_t>(0) : decimal(*part, 6);
      if (!m || !k) return error_plan(400, "_HLS_msn and _HLS_part are decimal numbers (a media sequence number and a part index)");
      w.block = LiveHlsPosition{*m, part->empty() ? std::nullopt : std::optional<std::size_t>(static_cast<std::size_t>(*k))};
    }
    w.kind = LiveHlsWant::Kind::playlist;
    // A live playlist changes with every part: never cached. A blocking reload's answer is the
    // playlist as of that part, which stays true: a cache may keep it briefly (rfc8216bis 6.2.5.2).
    p.headers = {{"Content-Type", "application/vnd.apple.mpegurl"}, {"Cache-Control", w.block ? "max-age=6" : "no-cache"}};
  } else if (numbered("seg-", 1)) {
    w.kind = LiveHlsWant::Kind::segment;
  } else if (numbered("part-", 2)) {
    w.kind = LiveHlsWant::Kind::part;
  } else {
    return error_plan(404,
                      "a live channel's HLS is /hls/live/NAME/index.m3u8, with its segments seg-N.ts and parts part-N.K.ts, "
                      "and with a DVR window /hls/live/NAME/dvr.m3u8");
  }
  // Segments and parts never change: their numbers follow the clock, so a URI is never reused.
  if (w.kind != LiveHlsWant::Kind::playlist) p.headers = {{"Content-Type", "video/mp2t"}, {"Cache-Control", "max-age=60"}};
  p.body = std::move(w);
  p.send_body = r.method == "GET";
  return p;
}

// A quoted-string attribute holds no '"' (RFC 8216, 4.2).
std::string quotable(std::string s) {
  std::replace(s.begin(), s.end(), '"', '\'');
  return s;
}

// A title's audio tracks are renditions of their own (EXT-X-MEDIA, its variants video alone) when
// it has more than one and every rendition is remuxed to fMP4 (a TS rendition's segments are its
// own bytes, with its audio in them).
bool audio_groups(const proto::Title& t, const proto::Catalog& c) {
  return audio_tracks(t).size() > 1 &&
         std::all_of(t.renditions.begin(), t.renditions.end(), [&](const auto& r) { return remuxed_to_fmp4(c.entries.at(r.entry)); });
}

// /hls/TITLE/master.m3u8: a title's multivariant playlist, a variant per rendition, each the
// rendition's own media playlist (TITLE/NAME - LABEL.ext/index.m3u8, relative). nullopt when the
// path names no title.
std::optional<Plan> title_request(const Request& r, const std::string& encoded, const Site& site) {
  auto name = routing::decoded_name(encoded, "title");
  if (!std::holds_alternative<std::string>(name)) return std::nullopt;  // a movie's path, if any, says what is wrong
  const proto::Title* title = proto::find_title(site.catalog.titles, std::get<std::string>(name));
  if (!title) return std::nullopt;
  HlsWant w;
  w.kind = HlsWant::Kind::title;
  w.name = title->name;
  const bool groups = audio_groups(*title, site.catalog);
  for (const proto::TitleRendition& t : title->renditions) {
    const proto::CatalogEntry& e = site.catalog.entries.at(t.entry);
    const std::string base = e.name.substr(title->name.size() + 1);  // a rendition is in the title's folder
    const std::string uri = groups ? "video-" + client::percent_encode_path(t.label) : client::percent_encode_path(base);
    const std::string iframes = remuxed_to_fmp4(e) ? "video-" + client::percent_encode_path(t.label) + "/iframes.m3u8" : "";
    w.renditions.push_back({e.name, uri + "/index.m3u8", e.bitrate_bps, e.width, e.height, t.frame_rate_num, t.frame_rate_den, iframes});
  }
  if (groups) {
    const auto tracks = audio_tracks(*title);
    bool any_default = false;
    for (std::size_t i = 0; i < tracks.size(); ++i) {
      const bool is_default = tracks[i].is_default && !any_default;
      any_default = any_default || is_default;
      w.media.push_back({"AUDIO", "audio", "audio-" + std::to_string(i) + "/index.m3u8", tracks[i].language,
                         quotable(routing::track_name(tracks[i], i, "audio")), tracks[i].channels, is_default});
    }
    if (!any_default) w.media.front().is_default = true;
  }
  const auto subtitles = subtitle_tracks(*title);
  for (std::size_t i = 0; i < subtitles.size(); ++i)
    w.media.push_back({"SUBTITLES", "subs", "subtitles-" + std::to_string(i) + "/index.m3u8", subtitles[i].language,
                       quotable(routing::track_name(subtitles[i], i, "subtitles")), 0, false});
  Plan p;
  p.headers = {{"Content-Type", "application/vnd.apple.mpegurl"}, {"Cache-Control", "max-age=30"}};
  p.body = std::move(w);
  p.send_body = r.method == "GET";
  return p;
}

// /hls/TITLE/video-LABEL/... (a rendition's video alone) and /hls/TITLE/audio-K/... (the title's
// audio track K alone): index.m3u8, init.mp4 and seg-N.m4s, remuxed from the rendition's movie.
// nullopt when the path names no such part of a title.
std::optional<Plan> title_part_request(const Request& r, const std::string& encoded, const std::string& file, HlsWant w, const Site& site) {
  auto decoded = routing::decoded_name(encoded, "title");
  if (!std::holds_alternative<std::string>(decoded)) return std::nullopt;
  const std::string& name = std::get<std::string>(decoded);
  const auto slash = name.rfind('/');
  if (slash == std::string::npos || site.catalog.find(name)) return std::nullopt;  // a movie of that name comes first
  const proto::Title* title = proto::find_title(site.catalog.titles, name.substr(0, slash));
  if (!title) return std::nullopt;
  const std::string part = name.substr(slash + 1);
  if (part.rfind("video-", 0) == 0) {
    const auto it =
        std::find_if(title->renditions.begin(), title->renditions.end(), [&](const auto& x) { return x.label == part.substr(6); });
    if (it == title->renditions.end()) return error_plan(404, "title '" + title->name + "' has no rendition '" + part.substr(6) + "'");
    w.name = site.catalog.entries.at(it->entry).name;
    w.tracks = hls::kVideoTrack;
  } else if (part.rfind("audio-", 0) == 0) {
    const auto tracks = audio_tracks(*title);
    const auto k = decimal(part.substr(6), 2);
    if (!k || *k >= tracks.size())
      return error_plan(404, "title '" + title->name + "' has " + std::to_string(tracks.size()) + " audio tracks, from audio-0");
    w.name = site.catalog.entries.at(tracks[*k].entry).name;
    w.tracks = tracks[*k].stream;
  } else if (part.rfind("subtitles-", 0) == 0) {
    const auto tracks = subtitle_tracks(*title);
    const auto k = decimal(part.substr(10), 2);
    if (!k || *k >= tracks.size())
      return error_plan(404, "title '" + title->name + "' has " + std::to_string(tracks.size()) + " subtitle tracks, from subtitles-0");
    const auto n = segment_number(file, ".vtt");
    if (file != "index.m3u8" && !n) return error_plan(404, "a title's " + part + " has index.m3u8 and seg-N.vtt");
    w.kind = n ? HlsWant::Kind::subtitles_segment : HlsWant::Kind::subtitles;
    w.segment = n.value_or(0);
    w.name = site.catalog.entries.at(tracks[*k].entry).name;
    w.cue_stream = tracks[*k].stream == proto::kWholeFile ? -1 : tracks[*k].stream;
    w.reference = site.catalog.entries.at(title->renditions.front().entry).name;
    Plan p;
    p.headers = {{"Content-Type", n ? "text/vtt; charset=utf-8" : "application/vnd.apple.mpegurl"}, {"Cache-Control", "max-age=30"}};
    p.body = std::move(w);
    p.send_body = r.method == "GET";
    return p;
  } else {
    return std::nullopt;
  }
  const proto::CatalogEntry& e = *site.catalog.find(w.name);
  if (!remuxed_to_fmp4(e)) return error_plan(404, "'" + w.name + "' is MPEG-TS: title '" + title->name + "' plays it with its audio");
  if (w.kind == HlsWant::Kind::multivariant || file == "movie.ts")
    return error_plan(404, "a title's " + part + " has index.m3u8, init.mp4 and seg-N.m4s (and a video's iframes.m3u8)");
  const bool iframes = w.kind == HlsWant::Kind::iframes || w.kind == HlsWant::Kind::iframe;
  if (iframes && w.tracks != hls::kVideoTrack) return error_plan(404, "I-frame playlists are a title's video-LABEL/iframes.m3u8");
  const bool piece = w.kind == HlsWant::Kind::init || w.kind == HlsWant::Kind::segment || w.kind == HlsWant::Kind::iframe;
  Plan p;
  p.headers = {{"Content-Type", piece ? "video/mp4" : "application/vnd.apple.mpegurl"},
               {"Cache-Control", piece ? "max-age=3600" : "max-age=30"}};
  if (std::string etag = etag_for(e); !etag.empty()) p.headers.emplace_back("ETag", etag.insert(1, "hls-" + part + "-" + file + "-"));
  w.movie_uri = "";
  p.body = std::move(w);
  p.send_body = r.method == "GET";
  return p;
}

}  // namespace

namespace routing {

// An HLS answer that could not be made: 503 with Retry-After while it may come, 404 when it cannot
// (or the status given).
Plan hls_error(const Plan& want, const std::string& error, bool retry, unsigned status) {
  Plan e = error_plan(status ? status : retry ? 503 : 404, error);
  if (retry) e.headers.emplace_back("Retry-After", "2");
  for (const auto& h : want.headers)  // CORS, set for the request, holds for its error too
    if (h.first == "Vary" || h.first.rfind("Access-Control-", 0) == 0) e.headers.push_back(h);
  e.send_body = want.send_body;
  return e;
}

std::string track_name(const proto::TitleTrack& k, std::size_t i, const char* fallback) {
  return (!k.name.empty() ? k.name : !k.language.empty() ? k.language : fallback) + " (" + std::to_string(i + 1) + ")";
}

bool remuxed_to_fmp4(const proto::CatalogEntry& e) { return e.container == "mp4" || e.container == "matroska" || e.container == "webm"; }

std::vector<proto::TitleTrack> audio_tracks(const proto::Title& t) {
  std::vector<proto::TitleTrack> out;
  for (const auto& k : t.tracks)
    if (k.kind == proto::TrackKind::audio) out.push_back(k);
  return out;
}

std::vector<proto::TitleTrack> subtitle_tracks(const proto::Title& t) {
  std::vector<proto::TitleTrack> out;
  for (const auto& k : t.tracks)
    if (k.kind == proto::TrackKind::subtitles && k.rendition == proto::kAllRenditions) out.push_back(k);
  return out;
}

// /hls/NAME/index.m3u8 (media playlist), /hls/NAME/master.m3u8 (multivariant); for TS movies
// /hls/NAME/movie.ts (the movie, by ranges), for fMP4 ones /hls/NAME/init.mp4 and /hls/NAME/seg-N.m4s.
// NAME is a path ("Films/A (2024)/A (2024).mp4"), so the file is what follows its last '/': the
// longest name a path can start with and still name a file. /hls/live/ is never a movie's ("live"
// is reserved at the top of a library).
Plan hls_request(const Request& r, const std::string& path, const Site& site) {
  const std::string rest = path.substr(5);
  const auto slash = rest.rfind('/');
  const std::string file = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (rest.rfind("live/", 0) == 0) return live_hls_request(r, rest.substr(5), site);
  HlsWant w;
  if (file == "index.m3u8") w.kind = HlsWant::Kind::media;
  else if (file == "master.m3u8") w.kind = HlsWant::Kind::multivariant;
  else if (file == "init.mp4") w.kind = HlsWant::Kind::init;
  else if (file == "iframes.m3u8") w.kind = HlsWant::Kind::iframes;
  else if (auto k = iframe_number(file)) w.kind = HlsWant::Kind::iframe, w.segment = *k;
  else if (auto n = segment_number(file)) w.kind = HlsWant::Kind::segment, w.segment = *n;
  else if (segment_number(file, ".vtt") && slash != std::string::npos) {  // only a title's subtitles have these
    if (auto part = title_part_request(r, rest.substr(0, slash), file, w, site)) return std::move(*part);
    return error_plan(404, "WebVTT segments are a title's subtitles: /hls/TITLE/subtitles-K/seg-N.vtt");
  } else if (file != "movie.ts")
    return error_plan(404, "HLS playlists are /hls/NAME/master.m3u8 (multivariant) and /hls/NAME/index.m3u8 (media)");
  if (w.kind == HlsWant::Kind::multivariant && slash != std::string::npos)
    if (auto title = title_request(r, rest.substr(0, slash), site)) return std::move(*title);
  if (slash != std::string::npos)
    if (auto part = title_part_request(r, rest.substr(0, slash), file, w, site)) return std::move(*part);
  if (w.kind == HlsWant::Kind::iframes || w.kind == HlsWant::Kind::iframe)
    return error_plan(404, "I-frame playlists are a title's: /hls/TITLE/video-LABEL/iframes.m3u8");
  auto found = named_entry(rest.substr(0, slash), site.catalog);
  if (auto* plan = std::get_if<Plan>(&found)) return std::move(*plan);
  const proto::CatalogEntry& e = *std::get<const proto::CatalogEntry*>(found);
  if (is_live(e))
    return error_plan(
        404, "'" + e.name + "' is a live channel: its playlist would be /hls/live/" + client::percent_encode_path(e.name) + "/index.m3u8");
  const bool fmp4 = e.container == "mp4" || e.container == "matroska" || e.container == "webm";
  if (e.container != "mpegts" && !fmp4)
    return error_plan(404, "'" + e.name + "' is " + (e.container.empty() ? std::string("not media libavformat recognises") : e.container) +
                               ": HLS is made of MPEG-TS, MP4 and Matroska movies; play " + media_path(e) + " as it is");
  // A TS movie's segments: byte ranges of the movie itself, by the Range path, under a name that
  // ends in .ts whatever the movie's (players such as ffmpeg take segments by their extension).
  if (file == "movie.ts") {
    if (fmp4) return error_plan(404, "'" + e.name + "' is " + e.container + ": its segments are init.mp4 and seg-N.m4s (see index.m3u8)");
    return movie(r, e);
  }
  const bool piece = w.kind == HlsWant::Kind::init || w.kind == HlsWant::Kind::segment;
  if (piece && !fmp4) return error_plan(404, "'" + e.name + "' is MPEG-TS: its segments are byte ranges of movie.ts (see index.m3u8)");
  Plan p;
  // Playlists and pieces change only with the movie's bytes (the ETag's content identity).
  p.headers = {{"Content-Type", piece ? "video/mp4" : "application/vnd.apple.mpegurl"},
               {"Cache-Control", piece ? "max-age=3600" : "max-age=30"}};
  if (std::string etag = etag_for(e); !etag.empty()) p.headers.emplace_back("ETag", etag.insert(1, "hls-" + file + "-"));
  w.name = e.name;
  w.movie_uri = ts_segments_uri(e);
  w.bitrate_bps = e.bitrate_bps;
  w.width = e.width;
  w.height = e.height;
  p.body = std::move(w);
  return p;
}

}  // namespace routing

Plan hls_plan(Plan p, const hls::MovieFacts& facts) {
  const HlsWant want = *p.as<HlsWant>();
  if (!facts.error.empty()) return hls_error(p, facts.error, facts.retry);
  if (want.kind == HlsWant::Kind::iframes) {
    p.body = hls::iframe_playlist(facts.keyframes_us, facts.duration_us);
  } else if (want.kind == HlsWant::Kind::media) {
    p.body = facts.fmp4 ? hls::fmp4_media_playlist(facts.segments) : hls::ts_media_playlist(facts.segments, want.movie_uri, facts.ts_init);
  } else {
    hls::Variant v{"index.m3u8",
                   facts.codecs,
                   hls::peak_bandwidth(facts.segments, want.bitrate_bps),
                   want.bitrate_bps,
                   want.width,
                   want.height,
                   0,
                   0,
                   "",
                   "",
                   ""};
    p.body = hls::multivariant_playlist(v);
  }
  return p;
}

Plan title_hls_plan(Plan p, const std::vector<std::shared_ptr<const hls::MovieFacts>>& facts) {
  const HlsWant want = *p.as<HlsWant>();
  std::vector<hls::Variant> variants;
  for (std::size_t i = 0; i < want.renditions.size() && i < facts.size(); ++i) {
    const HlsWant::Rendition& r = want.renditions[i];
    if (!facts[i]->error.empty()) return hls_error(p, "title '" + want.name + "': " + facts[i]->error, facts[i]->retry);
    variants.push_back({r.uri, facts[i]->codecs, hls::peak_bandwidth(facts[i]->segments, r.bitrate_bps), r.bitrate_bps, r.width, r.height,
                        r.frame_rate_num, r.frame_rate_den, "", "", r.iframe_uri});
    for (const auto& m : want.media) (m.type == "AUDIO" ? variants.back().audio_group : variants.back().subtitles_group) = m.group;
  }
  p.body = hls::multivariant_playlist(variants, want.media);
  return p;
}

Plan subtitles_plan(Plan p, const hls::MovieFacts& reference, const hls::Cues* cues) {
  const HlsWant want = *p.as<HlsWant>();
  if (!reference.error.empty()) return hls_error(p, reference.error, reference.retry);
  if (want.kind == HlsWant::Kind::subtitles) {
    p.body = hls::webvtt_media_playlist(reference.segments);
    return p;
  }
  if (!cues || !cues->error.empty()) return hls_error(p, cues ? cues->error : "no cues", cues && cues->retry);
  if (want.segment >= reference.segments.size())
    return error_plan(404, "the title has " + std::to_string(reference.segments.size()) + " segments, from seg-0.vtt");
  const hls::Segment& s = reference.segments[want.segment];
  const bool last = want.segment + 1 == reference.segments.size();
  p.body = media::webvtt_segment(cues->cues, s.start_us, last ? ~0ull : s.start_us + s.duration_us, reference.mpegts_at_zero);
  return p;
}

Plan live_hls_plan(Plan p, const LiveHlsReply& reply) {
  if (reply.status != 200) return hls_error(p, reply.error, reply.retry, reply.status);
  p.body = reply.body;
  return p;
}

Plan hls_piece_plan(Plan p, const std::string& bytes, const std::string& error, bool retry) {
  if (!error.empty()) return hls_error(p, error, retry);
  p.body = bytes;
  return p;
}

}  // namespace vod::proxy
