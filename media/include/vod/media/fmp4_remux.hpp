// SPDX-License-Identifier: LGPL-2.1-or-later
// HLS segments of an MP4 or Matroska movie as fragmented MP4 (CMAF-style: an init segment, then
// one moof+mdat per segment), remuxed on the fly with libavformat from the movie's own packets:
// nothing is re-encoded. Each call opens the movie anew over `read_at` (the container's header,
// then only the packets of the segment), confined like every open of movie bytes (demuxer.hpp).
//
// Segments are cut by presentation time at the movie's keyframes, as the keyframe index gives them
// (microseconds from the movie's start): video from the keyframe at `start_us` up to the first
// keyframe at or after `end_us`, in decode order; audio whose presentation time is in
// [start_us, end_us) (the first segment also takes the audio before its keyframe). Every packet
// lands in exactly one segment, and every segment's decode times
// (tfdt) continue the last one's, so a player can play them in order or start at any.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <vector>

namespace vod::media {

// Presentation times in the segments are the movie's shifted forward by this much (B-frames give
// the first packets negative decode times, which a tfdt cannot hold): a WebVTT segment's
// X-TIMESTAMP-MAP names the movie's time 0 there.
inline constexpr std::int64_t kFmp4ShiftUs = 10'000'000;

using ReadBytesAt = std::function<std::size_t(std::uint64_t offset, std::span<std::uint8_t> dest)>;

struct Fmp4Options {
  std::chrono::milliseconds time_limit{10000};  // for one call, reads included
  unsigned max_packets = 50000;                 // read for one segment before giving up
  // Which tracks: the best video and the best audio stream (a movie's HLS), the video alone (a
  // title's variant when its audio tracks are renditions of their own), or one audio stream alone
  // (`audio_stream`, the container's stream index: such a rendition).
  enum class Tracks { best, video, audio } tracks = Tracks::best;
  int audio_stream = -1;
  // A media segment of the keyframe at start_us alone (an I-frame playlist's entry; with
  // Tracks::video, the only sample of the fragment).
  bool keyframe_only = false;
};

class Fmp4Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The init segment: ftyp and a moov with the tracks (options.tracks) and no samples. Throws Fmp4Error saying why (no stream MP4 can carry, a libavformat failure).
std::vector<std::uint8_t> fmp4_init_segment(std::uint64_t size, const ReadBytesAt& read_at, const Fmp4Options& options = {});

// Media segment `sequence` (0-based): a moof and its mdat. `end_us` of the last segment is past the
// movie's end. Throws Fmp4Error.
std::vector<std::uint8_t> fmp4_media_segment(std::uint64_t size, const ReadBytesAt& read_at, std::uint64_t start_us, std::uint64_t end_us,
                                             unsigned sequence, const Fmp4Options& options = {});

// The same segment as MPEG-TS (a title played over one-sided Reads from MP4 or Matroska renditions,
// client/title_reader.hpp): the video and every audio stream MPEG-TS can carry, PAT and PMT first,
// the parameter sets before the keyframe, the same shifted timestamps as the fMP4 segments, so
// that segments of any rendition follow one another; each one's continuity counters start at 0.
// `options.tracks` is ignored. Throws Fmp4Error.
std::vector<std::uint8_t> mpegts_media_segment(std::uint64_t size, const ReadBytesAt& read_at, std::uint64_t start_us, std::uint64_t end_us,
                                               unsigned sequence, const Fmp4Options& options = {});

}  // namespace vod::media
