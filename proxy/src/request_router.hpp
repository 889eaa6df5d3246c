// SPDX-License-Identifier: LGPL-2.1-or-later
// The proxy's HTTP logic as a pure function from a request to a plan for the response: which status,
// which headers, and which body (a page, or a byte range of a movie). It never touches a socket or
// RDMA, so it is unit-tested on its own (the Boost.Beast examples' split).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "dash_manifest.hpp"
#include "hls_playlist.hpp"
#include "live_hls_packager.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "web_pages.hpp"

namespace vod::proxy {

struct Request {
  std::string method;  // as sent
  std::string target;  // origin-form, e.g. /movies/a%20b.ts?x=1
  std::string host;    // Host header, for absolute URLs in the playlist; may be empty
  std::string range, if_range, if_match, if_none_match;
};

// A picture for the pages: a movie's poster (the keyframe at 10%), a frame of its timeline strip,
// or a live channel's current picture. The connection fills the body from the ThumbnailService.
struct ThumbnailWant {
  std::string name;
  std::optional<unsigned> strip_frame;  // none: the poster
  bool live = false;
  bool operator<(const ThumbnailWant& o) const { return std::tie(name, strip_frame, live) < std::tie(o.name, o.strip_frame, o.live); }
};

// An HLS playlist of a movie: made once the movie's facts are at hand (HlsService), by hls_plan().
struct HlsWant {
  // title: a title's multivariant playlist, made from the facts of each of `renditions`;
  // subtitles, subtitles_segment: a title's subtitles playlist and its WebVTT segment `segment`,
  // at the times of the title's first rendition (`reference`), of the cues of `name`'s `cue_stream`.
  // dash: a DASH manifest, `dash` filled in from the facts of each of `renditions`; dash_text: a
  // subtitle track as one WebVTT file (`name`, `cue_stream`).
  // iframes, iframe: a title rendition's I-frame playlist and its entry `segment` (the keyframe alone).
  enum class Kind {
    media,
    multivariant,
    init,
    segment,
    title,
    subtitles,
    subtitles_segment,
    dash,
    dash_text,
    iframes,
    iframe,
    dvr  // a live channel's DVR window as a sliding playlist (`name`: the window's entry; `skip`: _HLS_skip=YES)
  } kind = Kind::media;
  bool skip = false;
  unsigned segment = 0;           // Kind::segment: which (fMP4 movies)
  int tracks = hls::kBestTracks;  // of an fMP4 movie's pieces and playlist: hls_playlist.hpp
  std::string name;               // the movie's, or the title's
  std::string movie_uri;          // a TS movie's segments: /movies/NAME (percent-encoded), or movie.ts beside the playlist
  std::uint64_t bitrate_bps = 0;
  unsigned width = 0, height = 0;
  struct Rendition {
    std::string name;  // the movie
    std::string uri;   // its media playlist, relative to the title's
    std::uint64_t bitrate_bps = 0;
    unsigned width = 0, height = 0;
    std::uint32_t frame_rate_num = 0, frame_rate_den = 0;
    std::string iframe_uri;  // its I-frame playlist, relative to the title's; "" for none
  };
  std::vector<Rendition> renditions;       // Kind::title, highest rate first
  std::vector<hls::MediaRendition> media;  // Kind::title: its audio tracks (when renditions of their own) and subtitles
  std::string reference;                   // Kind::subtitles*: the title's first rendition
  int cue_stream = -1;                     // Kind::subtitles*: the subtitle stream of `name`; -1: the whole file
  dash::Presentation dash;                 // Kind::dash: its sets; video representations in the order of `renditions`
};

// A range of a movie, read through the pool.
struct MovieRange {
  std::string name;
  proto::ContentId content;  // the version of it the ETag names (unknown: none was sent)
  std::uint64_t offset = 0, length = 0;
};

// A live channel: endless, chunked, no Content-Length.
struct LiveStream {
  std::string channel;
};

// What a response's body is: exactly one of text ready to send (pages, errors, and what a service
// made); a range of a movie; a live channel; or what a service still has to make: a picture
// (ThumbnailService), a movie's playlist or fMP4 piece (HlsService), a live channel's playlist,
// segment or part (LiveHlsService). A service's answer turns its want into text (hls_plan,
// hls_piece_plan, live_hls_plan) or an error.
using Body = std::variant<std::string, MovieRange, LiveStream, ThumbnailWant, HlsWant, LiveHlsWant>;

struct Plan {
  unsigned status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // Content-Length is added by the sender
  Body body;
  bool send_body = true;  // false for HEAD and 304: headers only (Content-Length still describes it)

  // The body if it is a T, else null.
  template <class T>
  T* as() noexcept {
    return std::get_if<T>(&body);
  }
  template <class T>
  const T* as() const noexcept {
    return std::get_if<T>(&body);
  }
  const std::string& text() const noexcept;  // the text body; "" when the body is not text
  // Bytes the body has: a text's, a movie range's; 0 for a live channel or a want.
  std::uint64_t body_length() const noexcept;
  const std::string* header(const std::string& name) const noexcept;
};

// Where a request is answered from: the server's current catalog, the pages, the Host to use when
// a request has none, and the server's name for the pages.
struct Site {
  const proto::Catalog& catalog;
  const WebPages& pages;
  std::string default_host;
  std::string server;
  // Set when `catalog` is the last one read and the server has not answered since: why, and how
  // old it is. Pages built from it say so (an X-Catalog-Stale header; "stale" in /catalog.json).
  std::optional<std::string> stale = std::nullopt;
};

Plan route(const Request& request, const Site& site);

// The answer to an HLS playlist request once its movie's facts are known: the playlist, or an error
// saying why there is none (503 with Retry-After while the server builds the index or is away).
Plan hls_plan(Plan want, const hls::MovieFacts& facts);
// A title's multivariant playlist once the facts of each of its renditions are known (in the
// want's order), or the first error.
// A title's subtitles playlist, or its WebVTT segment, once the facts of its first rendition (the
// segment times) and, for a segment, the track's cues are known.
Plan subtitles_plan(Plan want, const hls::MovieFacts& reference, const hls::Cues* cues);
// A DASH manifest once the facts of each of its renditions are known (the first's give the times).
Plan dash_plan(Plan want, const std::vector<std::shared_ptr<const hls::MovieFacts>>& facts);
// A subtitle track as one WebVTT file once its cues are known.
Plan dash_text_plan(Plan want, const hls::Cues& cues);
Plan title_hls_plan(Plan want, const std::vector<std::shared_ptr<const hls::MovieFacts>>& facts);
// The answer to an fMP4 piece request (init.mp4, seg-N.m4s) once it is made: its bytes or the error.
Plan hls_piece_plan(Plan want, const std::string& bytes, const std::string& error, bool retry);

// The answer to a live channel's HLS request once LiveHlsService has it.
Plan live_hls_plan(Plan want, const LiveHlsReply& reply);

// The pages' own files (/static/...), which need no catalog: served while the server is away too.
// nullopt for any other path.
std::optional<Plan> static_plan(const Request& request, const WebPages& pages);

// The strong validator of a movie: its catalog generation, name hash and size.
// A strong ETag from the movie's content identity and size, or "" when its identity is not known
// (then no ETag is sent, and If-Range and If-None-Match never match).
std::string etag_for(const proto::CatalogEntry& movie);

// A plan for an error page (for failures found outside route(), e.g. the server being unreachable).
Plan error_plan(unsigned status, const std::string& message);

}  // namespace vod::proxy
