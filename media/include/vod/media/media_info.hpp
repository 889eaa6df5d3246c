// SPDX-License-Identifier: LGPL-2.1-or-later
// What the probe learns about a file: container, codecs, resolution, duration, bitrate and the MIME
// type the HTTP proxy serves it with. A file that is not media is still servable as raw bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vod::media {

// An audio or subtitle stream of a file, as its container declares it.
struct StreamTrack {
  enum class Kind { audio, subtitles } kind = Kind::audio;
  int stream = 0;           // the container's stream index
  std::string codec;        // libavcodec's name: "aac", "ac3", "subrip", "webvtt", "mov_text", "hdmv_pgs_subtitle"
  std::string language;     // the "language" tag as the file has it ("eng", "en", "pt-BR"), or ""
  std::string title;        // the "title" tag, or ""
  unsigned channels = 0;    // audio
  bool is_default = false;  // the container's default disposition
  bool text = false;        // subtitles that are text (can become WebVTT), not pictures
  bool operator==(const StreamTrack&) const = default;
};

struct MediaInfo {
  bool is_media = false;    // libavformat recognised it and found an audio or video stream
  bool refused = false;     // not to be served at all: its bytes name other files or URLs (note says)
  std::string container;    // short name: "mp4", "mpegts", "matroska", "webm", or "" for raw bytes
  std::string format_name;  // libavformat's demuxer name, e.g. "mov,mp4,m4a,3gp,3g2,mj2"
  std::string mime_type;    // "video/mp4", "video/mp2t", ..., "application/octet-stream"
  std::string video_codec;  // e.g. "h264"; empty without video
  std::string audio_codec;  // e.g. "aac"; empty without audio
  std::uint16_t width = 0, height = 0;
  std::uint32_t frame_rate_num = 0, frame_rate_den = 0;  // the video's average frame rate; 0/0 unknown
  std::vector<StreamTrack> tracks;                       // audio and subtitle streams, in stream order
  std::int64_t start_time_us = 0;                        // the container's first timestamp; index times count from it
  std::uint64_t duration_us = 0;                         // 0 when unknown
  std::uint64_t bitrate_bps = 0;                         // average over the file; 0 when unknown
  bool fragmented = false;                               // fragmented MP4 (moof boxes)
  std::string note;                                      // why a file is not media, or what was odd about it
};

}  // namespace vod::media
