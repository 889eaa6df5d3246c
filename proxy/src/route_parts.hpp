// SPDX-License-Identifier: LGPL-2.1-or-later
// What route() (request_router.cpp) and the HLS routes (hls_routes.cpp) share: internal to the
// router, pure like it, and tested through route().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "request_router.hpp"

namespace vod::proxy::routing {

// A movie's body or its range (Range, If-Range, If-Match, If-None-Match answered).
Plan movie(const Request& r, const proto::CatalogEntry& e);
// The value of `key` in the target's query string ("" when absent), percent-decoded; nullopt when
// its encoding is bad.
std::optional<std::string> query_value(const std::string& target, const std::string& key);
// The entry a page, picture or playlist path names (percent-encoded), or an error plan.
std::variant<const proto::CatalogEntry*, Plan> named_entry(const std::string& encoded, const proto::Catalog& catalog);
// A name taken from a path: percent-decoded and checked by the catalog's rule (a movie's path, or
// with `channel` a live channel's flat name), or a 400 plan saying why; `what` names it there.
std::variant<std::string, Plan> decoded_name(const std::string& encoded, const char* what = "name", bool channel = false);
// /hls/...: a movie's playlists and pieces, a live channel's playlist, segments and parts.
Plan hls_request(const Request& r, const std::string& path, const Site& site);
// /hls/live/NAME/dvr.m3u8 and dvr.ts (`file`) of `channel`: its DVR window's playlist and bytes.
Plan dvr_request(const Request& r, const proto::CatalogEntry& channel, const std::string& file, const Site& site);
// /dash/NAME/manifest.mpd (a title's, or an MP4 or Matroska movie's) and /dash/TITLE/subtitles-K.vtt.
Plan dash_request(const Request& r, const std::string& path, const Site& site);

// A title's parts, as HLS and DASH name them: whether a movie's pieces are remuxed to fMP4 (MP4,
// Matroska, WebM), the title's audio tracks (audio-K), and the subtitles of every rendition
// (subtitles-K; those of one rendition alone are in no group).
bool remuxed_to_fmp4(const proto::CatalogEntry& e);
// A track's name for viewers, unique among its kind: its own name, else its language, then its
// number ("en (1)").
std::string track_name(const proto::TitleTrack& k, std::size_t i, const char* fallback);
// An HLS or DASH answer that could not be made: 503 with Retry-After while it may come, 404 when
// it cannot (or the status given), with the request's CORS headers.
Plan hls_error(const Plan& want, const std::string& error, bool retry, unsigned status = 0);
std::vector<proto::TitleTrack> audio_tracks(const proto::Title& t);
std::vector<proto::TitleTrack> subtitle_tracks(const proto::Title& t);

}  // namespace vod::proxy::routing
