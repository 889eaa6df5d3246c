// SPDX-License-Identifier: LGPL-2.1-or-later
// libavformat over bytes read by offset: a custom AVIOContext whose read and seek callbacks walk a
// ByteSource (a span in memory, or a movie read over the network). One owner for the AVIOContext
// (and its buffer) and the AVFormatContext opened on it.
#pragma once

extern "C" {
#include <libavformat/avformat.h>
}

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

// Bytes by offset: read_at fills as much of `dest` as it can at `offset` and returns how many
// bytes it placed (0 at the end). It may throw; the demuxer turns that into an I/O error.
struct ByteSource {
  std::uint64_t size = 0;
  std::function<std::size_t(std::uint64_t offset, std::span<std::uint8_t> dest)> read_at;
};

// A source over bytes already in memory.
ByteSource memory_source(std::span<const std::uint8_t> bytes);

class Demuxer {
 public:
  // Opens and probes the input; `error()` says why when the bytes are not a container libavformat
  // knows. find_stream_info decodes a few frames to fill in codec parameters.
  Demuxer(std::span<const std::uint8_t> bytes, bool find_stream_info);
  Demuxer(ByteSource source, bool find_stream_info);
  Demuxer(const Demuxer&) = delete;
  Demuxer& operator=(const Demuxer&) = delete;
  ~Demuxer();

  bool ok() const noexcept { return format_ != nullptr; }
  const std::string& error() const noexcept { return error_; }
  AVFormatContext* format() const noexcept { return format_; }
  std::uint64_t position() const noexcept { return position_; }
  // What the source's read_at threw, if it did (libavformat only sees an I/O error).
  const std::string& read_error() const noexcept { return read_error_; }

 private:
  static int read(void* opaque, std::uint8_t* buf, int size);
  static std::int64_t seek(void* opaque, std::int64_t offset, int whence);

  void open(bool find_stream_info);

  ByteSource source_;
  std::uint64_t position_ = 0;
  AVIOContext* io_ = nullptr;
  AVFormatContext* format_ = nullptr;
  std::string error_, read_error_;
};

}  // namespace vod::media::detail
