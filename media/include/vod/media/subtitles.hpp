// SPDX-License-Identifier: LGPL-2.1-or-later
// Subtitles for HLS: the cues of a subtitle file beside a movie (SRT or WebVTT) or of a text
// subtitle stream inside one (mov_text, SubRip, WebVTT), read with libavformat and confined like
// every open of movie bytes (demuxer.hpp), then cut into WebVTT segments at the title's segment
// times. Cue text is plain text with the few tags WebVTT shares with SubRip (<i>, <b>, <u>).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace vod::media {

struct Cue {
  std::uint64_t start_us = 0, end_us = 0;  // from the movie's start
  std::string text;                        // UTF-8, lines separated by '\n', never empty, no blank line, no "-->"
  bool operator==(const Cue&) const = default;
};

class SubtitleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The cues of a subtitle file (`stream` < 0) or of text subtitle stream `stream` of a movie, in
// start order; at most `max_cues`. Throws SubtitleError saying why there are none (not a subtitle
// file, not a text stream, the time limit).
std::vector<Cue> read_cues(std::uint64_t size, const std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)>& read_at,
                           int stream, std::chrono::milliseconds time_limit = std::chrono::milliseconds(10000),
                           std::size_t max_cues = 100000);

// Cue text as a packet of `codec` (libavcodec's name) holds it, made safe for WebVTT: mov_text's
// 16-bit length prefix and style boxes dropped, "\r" and ASS override blocks ("{\an8}") removed,
// invalid UTF-8 replaced, "-->" broken, blank lines dropped. "" when nothing is left.
std::string cue_text(const std::string& codec, std::span<const std::uint8_t> payload);

// A WebVTT segment of [start_us, end_us): every cue that overlaps it, whole (a cue that spans a
// boundary is in both segments, as RFC 8216 3.5 allows), with an X-TIMESTAMP-MAP that maps the
// cues' time 0 to `mpegts_at_zero` (90 kHz: where the movie's time 0 is in its media segments).
std::string webvtt_segment(const std::vector<Cue>& cues, std::uint64_t start_us, std::uint64_t end_us, std::uint64_t mpegts_at_zero);

// Every cue as one WebVTT file (DASH's text track: times from the presentation's start).
std::string webvtt_file(const std::vector<Cue>& cues);

}  // namespace vod::media
