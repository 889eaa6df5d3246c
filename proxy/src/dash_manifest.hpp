// SPDX-License-Identifier: LGPL-2.1-or-later
// A title's (or an MP4 or Matroska movie's) MPEG-DASH manifest (ISO/IEC 23009-1), static, over the
// fMP4 segments its HLS playlists already name: an AdaptationSet of video with a Representation per
// rendition, one per audio track (by language), and one of WebVTT per subtitle track, every
// segment listed by a SegmentTimeline at the title's times. A pure function, tested as text
// (tests/unit/dash_manifest_test.cpp); vod-proxy fills it from the renditions' facts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hls_playlist.hpp"

namespace vod::proxy::dash {

struct Representation {
  std::string id;      // "720p", "audio-0": unique in the manifest
  std::string base;    // the segments' folder, an absolute path ("/hls/Films/X/video-720p/"): init.mp4 and seg-N.m4s
  std::string codecs;  // RFC 6381; "" when not known (left out)
  std::uint64_t bandwidth = 0;
  unsigned width = 0, height = 0;                        // video
  std::uint32_t frame_rate_num = 0, frame_rate_den = 0;  // video
  unsigned channels = 0;                                 // audio
};

struct AdaptationSet {
  enum class Type { video, audio, text } type = Type::video;
  std::string language;  // BCP 47, or ""
  std::string label;     // shown to viewers, or ""
  bool is_default = false;
  std::vector<Representation> representations;
  std::string text_url;  // text: the whole WebVTT file
};

struct Presentation {
  std::vector<hls::Segment> segments;  // the title's times (extinf_us is a segment's length)
  std::uint64_t duration_us = 0;
  // Where the movie's time 0 is in the segments' decode times (the fMP4 remux's shift and the
  // movie's first timestamp): the presentationTimeOffset.
  std::uint64_t time_zero_us = 0;
  std::vector<AdaptationSet> sets;
};

// The manifest: a static MPD (profile isoff-live, which SegmentTemplate needs), one Period, every
// AdaptationSet with segmentAlignment="true" and, for media, startWithSAP="1". Text is escaped for
// XML.
std::string manifest(const Presentation& p);

}  // namespace vod::proxy::dash
