// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel as Low-Latency HLS: the chunks a channel's hub delivers (LiveChunker cut them,
// with the frames that begin in each) cut into MPEG-TS segments and partial segments, in a sliding
// window, and the media playlist of that window (RFC 8216 and its successor draft, rfc8216bis).
// No I/O and no clock of its own: chunks and their arrival time in, playlists and bytes out, so
// it is table-tested on hand-made chunks (tests/unit/live_hls_packager_test.cpp).
//
// Cutting, at frame starts only, timed by the frames (Clock):
//   - a segment begins at a keyframe (with the PAT/PMT in front of it, so it decodes alone) once
//     the current one has lasted the segment target; a stream start (the session's first bytes,
//     a source restart, a skip) always begins one, marked EXT-X-DISCONTINUITY;
//   - a part ends before the frame that would take it past the part target, so parts stay within
//     PART-TARGET; a part that begins at a keyframe is INDEPENDENT=YES;
//   - a stream without keyframes in time is still cut, at kMaxSegmentFactor segment targets, into
//     a segment that does not begin at one (the player needs the one before).
// EXT-X-TARGETDURATION is the segment target rounded up, or the longest segment made so far when a
// longer GOP forced longer ones (rounded, as RFC 8216 section 4.3.3.1 asks): it never shrinks.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "live_chunker.hpp"

namespace vod::proxy {

struct LiveHlsSettings {
  double segment_seconds = 2.0;                           // --hls-live-segment-seconds
  double part_seconds = 0.5;                              // --hls-part-seconds
  std::size_t window_segments = 6;                        // complete segments kept, and listed, behind the one being made
  std::size_t max_segment_bytes = std::size_t{64} << 20;  // a segment is cut at this size, keyframe or not
};

inline constexpr double kMaxSegmentFactor = 3.0;

struct LiveHlsPart {
  std::size_t offset = 0, length = 0;  // in the segment's bytes
  double duration = 0;
  bool independent = false;
};

struct LiveHlsSegment {
  std::uint64_t msn = 0;       // EXT-X-MEDIA-SEQUENCE numbering
  bool discontinuity = false;  // begins a new stream (not for the first segment made)
  bool complete = false;
  double duration = 0;                                 // complete segments
  std::chrono::system_clock::time_point program_time;  // when its first byte reached the proxy
  std::string bytes;
  std::vector<LiveHlsPart> parts;  // finished parts
};

// What a blocking playlist reload waits for (rfc8216bis 6.2.5.2): segment `msn` complete, or its
// part `part`.
struct LiveHlsPosition {
  std::uint64_t msn = 0;
  std::optional<std::size_t> part;
};

// A request for a live channel's HLS (request_router fills it; LiveHlsService answers it).
struct LiveHlsWant {
  enum class Kind { playlist, segment, part } kind = Kind::playlist;
  std::string channel;
  std::uint64_t msn = 0;                 // segment, part
  std::size_t part = 0;                  // part
  std::optional<LiveHlsPosition> block;  // playlist: _HLS_msn (and _HLS_part), a blocking reload
};

// What a request gets: the body (a playlist, a segment or a part), or an HTTP error and why.
struct LiveHlsReply {
  unsigned status = 200;
  std::string body;
  std::string error;   // set when status is not 200
  bool retry = false;  // 503: Retry-After
};

class LiveHlsPackager {
 public:
  // Segments are numbered from `first_msn` on. LiveHlsService numbers them by the clock, so that a
  // channel packaged again later (after an idle close, a restart of the proxy) never reuses a
  // segment URI that a cache may still hold (and never begins at 0, which hls.js once mishandled).
  explicit LiveHlsPackager(LiveHlsSettings settings, std::uint64_t first_msn = 0);

  // The next chunk of the channel, which reached the proxy at `arrived`. `discontinuity`: the
  // bytes do not follow the previous ones (the viewer skipped), as a stream start does.
  void feed(const FanoutChunk& chunk, std::chrono::system_clock::time_point arrived, bool discontinuity = false);

  // The media playlist of the window; empty while no part is finished.
  std::string playlist() const;
  bool ready() const noexcept { return finished_parts_ > 0; }
  // The window's complete segments last three target durations (the HOLD-BACK a player without
  // LL-HLS starts behind the end, RFC 8216 6.3.3), or fill the window: what such a player needs to
  // begin. Chromium's own HLS, given less, never starts playing.
  bool holds_back() const noexcept;

  // A complete segment, or a finished part, still in the window; nullopt otherwise.
  std::optional<std::string_view> segment(std::uint64_t msn) const;
  std::optional<std::string_view> part(std::uint64_t msn, std::size_t index) const;
  // The part the playlist's EXT-X-PRELOAD-HINT names: the one being made.
  LiveHlsPosition next_part() const;
  // Whether the playlist holds `p` already (or something after it).
  bool has(const LiveHlsPosition& p) const;
  // The oldest segment still in the window (its EXT-X-MEDIA-SEQUENCE), and the newest one begun.
  std::uint64_t first_msn() const noexcept;
  std::uint64_t last_msn() const noexcept { return next_msn_ == first_msn_made_ ? first_msn_made_ : next_msn_ - 1; }

  unsigned target_duration() const noexcept { return target_duration_; }
  std::size_t bytes() const noexcept;  // held in the window
  std::uint64_t segments_made() const noexcept { return next_msn_ - first_msn_made_; }

 private:
  // The channel's media time, in seconds: one frame's duration per frame. The frames come in
  // decode order, so with B-frames their PTS go back and forth; a frame's duration is the smallest
  // step between the PTS of neighbouring frames lately (B1 to B2 in I0 P3 B1 B2). Counting frames
  // also rides over PTS wraps and jumps. Segments begin at keyframes, so a segment's EXTINF is its
  // frames' count times that duration: exact for the constant frame rates encoders send live.
  struct Clock {
    double now = 0;
    std::optional<std::uint64_t> last_pts;
    double frame_seconds = 0;
    std::array<double, 32> steps{};  // the latest steps between neighbouring PTS, in seconds
    std::size_t step_count = 0;
    void advance(std::uint64_t pts_90k);
  };
  struct Cursor {                                    // the segment and part being made
    bool segment_timed = false, part_timed = false;  // a frame with a PTS has begun in it
    double segment_start = 0, part_start = 0;        // on the clock
    std::size_t part_offset = 0;
    bool part_independent = false;
  };
  LiveHlsSegment& current() { return segments_.back(); }
  void begin_segment(std::chrono::system_clock::time_point arrived, bool discontinuity, bool independent);
  void finish_part(double end, bool next_independent);
  void finish_segment(double end);
  void append(const std::uint8_t* data, std::size_t length, std::chrono::system_clock::time_point arrived);
  void at_frame(const AccessUnitMark& unit, std::chrono::system_clock::time_point arrived);

  LiveHlsSettings settings_;
  std::deque<LiveHlsSegment> segments_;  // the window, the one being made last
  Clock clock_;
  Cursor cursor_;
  std::uint64_t next_msn_ = 0;
  std::uint64_t first_msn_made_ = 0;
  std::uint64_t discontinuities_dropped_ = 0;  // EXT-X-DISCONTINUITY-SEQUENCE
  std::uint64_t finished_parts_ = 0;
  unsigned target_duration_;
  bool started_ = false;  // a segment has begun (at a join point)
};

}  // namespace vod::proxy
