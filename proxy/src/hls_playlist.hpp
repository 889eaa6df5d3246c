// SPDX-License-Identifier: LGPL-2.1-or-later
// HLS playlists of a movie (RFC 8216), made from its catalog entry and its keyframe index alone:
// no movie byte is read to cut segments. Pure functions, table-tested (tests/unit/hls_playlist_test.cpp);
// the proxy's HTTP path fills them in once the index and the stream facts are at hand.
//
// An MPEG-TS movie is served as it is: every segment is a byte range of /movies/NAME that starts at
// a keyframe (EXT-X-BYTERANGE), so a segment is answered by the Range path, one-sided Reads and no
// copy. A segment cut at a keyframe holds no PAT or PMT of its own, so the playlist's EXT-X-MAP
// names the range of the file's leading tables (ts_init_range).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vod/client/segment_cut.hpp"
#include "vod/media/subtitles.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::proxy::hls {

// Which tracks of a movie an fMP4 piece holds: the best video and audio (a movie's HLS), the video
// alone (a title's variant whose audio tracks are renditions of their own), or, from 0, the audio
// stream of that index alone (such a rendition).
inline constexpr int kBestTracks = -2, kVideoTrack = -1;

// The segments a title's renditions and a movie are cut into: one home, libvodclient's (a title
// played over RDMA switches renditions at the same cuts).
using client::ByteSpan;
using client::cut_like;
using client::cut_segments;
using client::Segment;

// A live channel's DVR window as a sliding HLS playlist (/hls/live/NAME/dvr.m3u8): a segment per
// keyframe mark of the window index, a byte range of `uri` (the window read by stream offsets) from
// that mark to the next, both within the window's whole chunks; EXT-X-PROGRAM-DATE-TIME on every
// segment, from the server's publish time; EXTINF from the publish times too; the media sequence
// number is the mark's, so a segment keeps its number as the window slides; the discontinuity
// sequence follows the source's stream ids. `min_target_s` floors EXT-X-TARGETDURATION, which a
// window should not change as it slides. With `skip` (a client's _HLS_skip=YES), the segments older
// than CAN-SKIP-UNTIL (six target durations) before the end are replaced by EXT-X-SKIP.
std::string dvr_playlist(const proto::WindowIndex& window, const std::string& uri, unsigned min_target_s, bool skip);

// EXT-X-TARGETDURATION: every segment's duration, rounded to the nearest second, is at most this
// (RFC 8216, 4.3.3.1); at least 1.
unsigned target_duration(const std::vector<Segment>& segments);

// The range [0, end) of an MPEG-TS file's leading tables: the packets from the start through the
// first PAT and the PMT it names, when every packet up to there is a table (PSI/SI) or a null packet,
// so that the range holds no media. nullopt when `head` (the file's first bytes) does not start with
// such a run: then the playlist has no EXT-X-MAP, and a player finds the tables in the segments if
// the muxer repeats them. Never reads past `head`; hostile bytes only shorten the answer.
std::optional<ByteSpan> ts_init_range(std::span<const std::uint8_t> head);

// What a movie's playlists are made from (HlsService fetches it once per movie and catalog generation).
struct MovieFacts {
  std::vector<Segment> segments;
  bool fmp4 = false;                        // MP4 and Matroska: fMP4 segments remuxed on the fly (init.mp4, seg-N.m4s)
  std::optional<ByteSpan> ts_init;          // MPEG-TS: the leading PAT/PMT
  std::string codecs;                       // RFC 6381, e.g. "avc1.64001e,mp4a.40.2"; "" when not known
  std::uint64_t mpegts_at_zero = 0;         // 90 kHz: where the movie's time 0 is in its segments (X-TIMESTAMP-MAP)
  std::vector<std::uint64_t> keyframes_us;  // the movie's own keyframes (an I-frame playlist's entries)
  std::uint64_t duration_us = 0;
  std::string error;   // set when the facts could not be had: why
  bool retry = false;  // the error may pass (the index is being built, the server is away)
};

// The media playlist of a TS movie served by byte ranges of `movie_uri` (vod-proxy: "movie.ts",
// which is the movie under the playlist's path).
std::string ts_media_playlist(const std::vector<Segment>& segments, const std::string& movie_uri, const std::optional<ByteSpan>& init);

// The media playlist of a movie served as fMP4: EXT-X-MAP "init.mp4", segments "seg-N.m4s", both
// relative to the playlist.
std::string fmp4_media_playlist(const std::vector<Segment>& segments);

// What a multivariant playlist says of the one variant: RFC 6381 codecs ("avc1.64001f,mp4a.40.2"),
// the peak bit rate of its segments (bits per second) and the average over the movie.
struct Variant {
  std::string uri;
  std::string codecs;  // empty: not known (the attribute is left out)
  std::uint64_t bandwidth = 0, average_bandwidth = 0;
  unsigned width = 0, height = 0;
  std::uint32_t frame_rate_num = 0, frame_rate_den = 0;  // FRAME-RATE, when known
  std::string audio_group;                               // AUDIO: its audio is in that group's renditions
  std::string subtitles_group;                           // SUBTITLES
  std::string iframe_uri;                                // its I-frame playlist, or "": an EXT-X-I-FRAME-STREAM-INF
};
// An audio or subtitles rendition of a title (EXT-X-MEDIA).
struct MediaRendition {
  std::string type;                        // "AUDIO" or "SUBTITLES"
  std::string group, uri, language, name;  // language: BCP 47 or ""; name: unique in the group
  unsigned channels = 0;
  bool is_default = false;
};
std::string multivariant_playlist(const Variant& v);
// A title's: its audio renditions, then one EXT-X-STREAM-INF per variant, in the order given.
std::string multivariant_playlist(const std::vector<Variant>& variants, const std::vector<MediaRendition>& media = {});

// The cues of a subtitle file or stream (HlsService reads them once per track and generation).
struct Cues {
  std::vector<media::Cue> cues;
  std::string error;
  bool retry = false;
};

// An fMP4 movie's I-frame playlist (RFC 8216, 4.3.3.6): EXT-X-MAP "init.mp4", then entry N
// "iframe-N.m4s", the keyframe at keyframes_us[N] alone, lasting until the next keyframe.
std::string iframe_playlist(const std::vector<std::uint64_t>& keyframes_us, std::uint64_t duration_us);

// The media playlist of a title's subtitles: segment N is "seg-N.vtt", at the title's times.
std::string webvtt_media_playlist(const std::vector<Segment>& segments);

// The peak segment bit rate (BANDWIDTH): the largest bytes × 8 / duration over the segments, or
// `fallback` when there are none.
std::uint64_t peak_bandwidth(const std::vector<Segment>& segments, std::uint64_t fallback);

// RFC 6381 codec strings from codec parameters (ISO/IEC 14496-15 and 14496-3): H.264's profile_idc,
// constraint flags and level_idc from its SPS; AAC's audio object type. nullopt when not enough is known.
std::optional<std::string> avc_codec(unsigned profile_idc, unsigned constraint_flags, unsigned level_idc);
std::optional<std::string> aac_codec(unsigned object_type);

}  // namespace vod::proxy::hls
