// SPDX-License-Identifier: LGPL-2.1-or-later
// The router's /dash/ paths: a title's (or an MP4 or Matroska movie's) DASH manifest over the fMP4
// segments of its HLS routes, and a subtitle track as one WebVTT file. Pure, as route() is; the
// manifest is made by dash_plan() once the renditions' facts are at hand.
#include <algorithm>

#include "route_parts.hpp"
#include "vod/client/uri.hpp"
#include "vod/media/subtitles.hpp"

namespace vod::proxy {

namespace {

using routing::audio_tracks;
using routing::remuxed_to_fmp4;
using routing::subtitle_tracks;

// "avc1.64001f,mp4a.40.2" -> the video's ("avc1.64001f") or the audio's ("mp4a.40.2") part.
std::string codec_part(const std::string& codecs, bool video) {
  const auto comma = codecs.find(',');
  const std::string first = codecs.substr(0, comma);
  const bool first_is_audio = first.rfind("mp4a", 0) == 0 || first == "ac-3" || first == "ec-3" || first == "opus" || first == "fLaC";
  if (video) return first_is_audio ? "" : first;
  return first_is_audio ? first : comma == std::string::npos ? "" : codecs.substr(comma + 1);
}

}  // namespace

namespace routing {

Plan dash_request(const Request& r, const std::string& path, const Site& site) {
  const std::string rest = path.substr(6);
  const auto slash = rest.rfind('/');
  if (slash == std::string::npos) return error_plan(404, "DASH manifests are /dash/NAME/manifest.mpd");
  const std::string file = rest.substr(slash + 1);
  auto decoded = decoded_name(rest.substr(0, slash), "name");
  if (auto* plan = std::get_if<Plan>(&decoded)) return std::move(*plan);
  const std::string& name = std::get<std::string>(decoded);
  const proto::Title* title = proto::find_title(site.catalog.titles, name);
  HlsWant w;
  Plan p;
  p.send_body = r.method == "GET";
  if (title && file.rfind("subtitles-", 0) == 0 && file.ends_with(".vtt")) {
    const auto tracks = subtitle_tracks(*title);
    const std::string k = file.substr(10, file.size() - 14);
    const bool number = !k.empty() && k.size() <= 2 && std::all_of(k.begin(), k.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!number || std::stoul(k) >= tracks.size())
      return error_plan(404, "title '" + title->name + "' has " + std::to_string(tracks.size()) + " subtitle tracks, from subtitles-0.vtt");
    const proto::TitleTrack& t = tracks[std::stoul(k)];
    w.kind = HlsWant::Kind::dash_text;
    w.name = site.catalog.entries.at(t.entry).name;
    w.cue_stream = t.stream == proto::kWholeFile ? -1 : t.stream;
    p.headers = {{"Content-Type", "text/vtt; charset=utf-8"}, {"Cache-Control", "max-age=30"}};
    p.body = std::move(w);
    return p;
  }
  if (file != "manifest.mpd")
    return error_plan(404, "DASH is /dash/NAME/manifest.mpd, and a title's subtitles /dash/TITLE/subtitles-K.vtt");
  w.kind = HlsWant::Kind::dash;
  using Set = dash::AdaptationSet;
  if (title) {
    w.name = title->name;
    const std::string base = "/hls/" + client::percent_encode_path(title->name) + "/";
    Set video{Set::Type::video, "", "", true, {}, ""};
    for (const proto::TitleRendition& t : title->renditions) {
      const proto::CatalogEntry& e = site.catalog.entries.at(t.entry);
      if (!remuxed_to_fmp4(e))
        return error_plan(404, "DASH is made of fMP4 segments: '" + e.name + "' is " + e.container + "; its title plays in HLS");
      w.renditions.push_back({e.name, "", e.bitrate_bps, e.width, e.height, t.frame_rate_num, t.frame_rate_den, ""});
      video.representations.push_back({t.label, base + "video-" + client::percent_encode_path(t.label) + "/", "", e.bitrate_bps, e.width,
                                       e.height, t.frame_rate_num, t.frame_rate_den, 0});
    }
    w.dash.sets.push_back(std::move(video));
    const auto audio = audio_tracks(*title);
    for (std::size_t i = 0; i < audio.size(); ++i)
      w.dash.sets.push_back(
          {Set::Type::audio,
           audio[i].language,
           routing::track_name(audio[i], i, "audio"),
           audio[i].is_default,
           {{"audio-" + std::to_string(i), base + "audio-" + std::to_string(i) + "/", audio[i].codec, 0, 0, 0, 0, 0, audio[i].channels}},
           ""});
    const auto text = subtitle_tracks(*title);
    for (std::size_t i = 0; i < text.size(); ++i)
      w.dash.sets.push_back({Set::Type::text,
                             text[i].language,
                             routing::track_name(text[i], i, "subtitles"),
                             false,
                             {{"subtitles-" + std::to_string(i), "", "wvtt", 256, 0, 0, 0, 0, 0}},
                             "/dash/" + client::percent_encode_path(title->name) + "/subtitles-" + std::to_string(i) + ".vtt"});
  } else {
    const proto::CatalogEntry* e = site.catalog.find(name);
    if (!e || is_live(*e))
      return error_plan(404, "no title or movie '" + name + "' in catalog generation " + std::to_string(site.catalog.generation));
    if (!remuxed_to_fmp4(*e))
      return error_plan(404, "DASH is made of fMP4 segments: '" + e->name + "' is " + (e->container.empty() ? "not media" : e->container) +
                                 "; play /hls/" + client::percent_encode_path(e->name) + "/master.m3u8");
    w.name = e->name;
    w.renditions.push_back({e->name, "", e->bitrate_bps, e->width, e->height, 0, 0, ""});
    w.dash.sets.push_back(
        {Set::Type::video,
         "",
         "",
         true,
         {{"movie", "/hls/" + client::percent_encode_path(e->name) + "/", "", e->bitrate_bps, e->width, e->height, 0, 0, 0}},
         ""});
  }
  p.headers = {{"Content-Type", "application/dash+xml"}, {"Cache-Control", "max-age=30"}};
  p.body = std::move(w);
  return p;
}

}  // namespace routing

Plan dash_plan(Plan p, const std::vector<std::shared_ptr<const hls::MovieFacts>>& facts) {
  HlsWant want = *p.as<HlsWant>();
  for (const auto& f : facts)
    if (!f || !f->error.empty()) return routing::hls_error(p, f ? f->error : "no facts", f && f->retry);
  if (facts.empty()) return routing::hls_error(p, "no rendition", false);
  const hls::MovieFacts& first = *facts.front();
  dash::Presentation& d = want.dash;
  d.segments = first.segments;
  if (!d.segments.empty()) d.duration_us = d.segments.back().start_us + d.segments.back().extinf_us();
  d.time_zero_us = first.mpegts_at_zero * 100 / 9;
  const bool title = want.renditions.size() > 1 || d.sets.size() > 1 || d.sets.front().representations.front().id != "movie";
  for (auto& set : d.sets)
    for (std::size_t i = 0; i < set.representations.size(); ++i) {
      dash::Representation& rep = set.representations[i];
      if (set.type == dash::AdaptationSet::Type::video && i < facts.size()) {
        rep.codecs = title ? codec_part(facts[i]->codecs, true) : facts[i]->codecs;  // a movie's segments hold both
        rep.bandwidth = hls::peak_bandwidth(facts[i]->segments, want.renditions[i].bitrate_bps);
      } else if (set.type == dash::AdaptationSet::Type::audio) {
        // The first rendition's codec string names its best audio stream: the same for a track of that codec.
        rep.codecs = rep.codecs == "aac" ? codec_part(first.codecs, false) : "";
        rep.bandwidth = 128'000;  // an estimate: the catalog has no rate per stream
      }
    }
  p.body = dash::manifest(d);
  return p;
}

Plan dash_text_plan(Plan p, const hls::Cues& cues) {
  if (!cues.error.empty()) return routing::hls_error(p, cues.error, cues.retry);
  p.body = media::webvtt_file(cues.cues);
  return p;
}

}  // namespace vod::proxy
