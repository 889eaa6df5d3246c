// SPDX-License-Identifier: LGPL-2.1-or-later
// libavformat over bytes read by offset: a custom AVIOContext whose read and seek callbacks walk a
// ByteSource (a span in memory, or a movie read over the network). One owner for the AVIOContext
// (and its buffer) and the AVFormatContext opened on it.
//
// A movie's bytes are hostile input, and libavformat will follow what they name if it is let: an
// HLS playlist or a concat script opens URLs and files, a QuickTime reference opens its data file.
// So every open here is confined:
//   - only the demuxers of kServedFormats may run on the bytes; the format is detected first with
//     av_probe_input_buffer2 (probe functions only: they read the buffer, never open anything) and
//     refused before any demuxer code runs when it is not on the list;
//   - no nested open: an empty protocol whitelist, and an io_open callback that refuses every URL
//     and remembers the first one it was asked for;
//   - a deadline: an interrupt callback, and the read callback, give up once it has passed, so no
//     file (or slow source) holds the caller longer than its limit.
#pragma once

extern "C" {
#include <libavformat/avformat.h>
}

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace vod::media::detail {

// libav* logs to stderr by default, in several lines per event; garbage would fill a program's log.
// Callers report what matters themselves (MediaInfo::note, ThumbnailError). Idempotent.
void quiet_libav();

// libavformat's error text for an AVERROR code.
std::string av_error(int err);

// The demuxers that may read a movie (libavformat names, as av_match_list takes them): self-contained
// containers that never name another resource.
inline constexpr const char* kServedFormats = "mov,mp4,m4a,3gp,3g2,mj2,mpegts,matroska,webm,avi,flv,mpeg,mp3,aac,flac,ogg,wav";

// Formats libavformat recognises whose whole point is to name other files or URLs (playlists,
// manifests, concat scripts, session descriptions, scripts). Never opened; a file that is one is not
// a movie (probe() marks it refused).
bool names_other_resources(const char* format_name);

// Bytes by offset: read_at fills as much of `dest` as it can at `offset` and returns how many
// bytes it placed (0 at the end). It may throw; the demuxer turns that into an I/O error.
struct ByteSource {
  std::uint64_t size = 0;
  std::function<std::size_t(std::uint64_t offset, std::span<std::uint8_t> dest)> read_at;
};

// A source over bytes already in memory.
ByteSource memory_source(std::span<const std::uint8_t> bytes);

// Subtitle files beside movies: text formats that name nothing else (subtitles.hpp reads them).
inline constexpr const char* kSubtitleFormats = "srt,webvtt";

struct DemuxOptions {
  bool find_stream_info = false;                                              // decode a few frames to fill in codec parameters
  std::chrono::steady_clock::duration time_limit = std::chrono::seconds(10);  // from construction
  const char* formats = kServedFormats;                                       // the demuxers allowed: kServedFormats or kSubtitleFormats
};

class Demuxer {
 public:
  using Clock = std::chrono::steady_clock;

  // Detects the format, refuses it unless it is served, then opens and probes the input; `error()`
  // says why when it could not.
  Demuxer(std::span<const std::uint8_t> bytes, const DemuxOptions& options);
  Demuxer(ByteSource source, const DemuxOptions& options);
  Demuxer(const Demuxer&) = delete;
  Demuxer& operator=(const Demuxer&) = delete;
  ~Demuxer();

  bool ok() const noexcept { return format_ != nullptr; }
  const std::string& error() const noexcept { return error_; }
  AVFormatContext* format() const noexcept { return format_; }
  std::uint64_t position() const noexcept { return position_; }
  // What the source's read_at threw, if it did (libavformat only sees an I/O error).
  const std::string& read_error() const noexcept { return read_error_; }
  // The format libavformat detected when it is not one this project serves ("" otherwise).
  const std::string& unserved_format() const noexcept { return unserved_format_; }
  // The first URL a demuxer asked to open (refused), if any did.
  const std::string& refused_open() const noexcept { return refused_open_; }
  // Set when the bytes name other resources: a format of names_other_resources(), or a demuxer that
  // asked for a nested open. Such a file must not be served as a movie; the text says why.
  const std::string& nested_open() const noexcept { return nested_open_; }
  bool expired() const noexcept { return Clock::now() >= deadline_; }
  // "gave up after N s", for the callers' messages.
  std::string expiry_text() const;

 private:
  static int read(void* opaque, std::uint8_t* buf, int size);
  static std::int64_t seek(void* opaque, std::int64_t offset, int whence);
  static int interrupted(void* opaque);
  static int refuse_open(AVFormatContext* s, AVIOContext** pb, const char* url, int flags, AVDictionary** options);

  void open(bool find_stream_info, const char* formats);

  ByteSource source_;
  Clock::time_point started_, deadline_;
  std::uint64_t position_ = 0;
  AVIOContext* io_ = nullptr;
  AVFormatContext* format_ = nullptr;
  std::string error_, read_error_, unserved_format_, refused_open_, nested_open_;
};

}  // namespace vod::media::detail
