// libavformat over bytes in memory: a custom AVIOContext whose read and seek callbacks walk a span.
// One owner for the AVIOContext (and its buffer) and the AVFormatContext opened on it.
#pragma once

extern "C" {
#include <libavformat/avformat.h>
}

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace vod::media::detail {

// libavformat's error text for an AVERROR code.
std::string av_error(int err);

class MemoryDemuxer {
 public:
  // Opens and probes the input; `error()` says why when the bytes are not a container libavformat
  // knows. find_stream_info decodes a few frames to fill in codec parameters.
  MemoryDemuxer(std::span<const std::uint8_t> bytes, bool find_stream_info);
  MemoryDemuxer(const MemoryDemuxer&) = delete;
  MemoryDemuxer& operator=(const MemoryDemuxer&) = delete;
  ~MemoryDemuxer();

  bool ok() const noexcept { return format_ != nullptr; }
  const std::string& error() const noexcept { return error_; }
  AVFormatContext* format() const noexcept { return format_; }
  std::uint64_t position() const noexcept { return position_; }

 private:
  static int read(void* opaque, std::uint8_t* buf, int size);
  static std::int64_t seek(void* opaque, std::int64_t offset, int whence);

  std::span<const std::uint8_t> bytes_;
  std::uint64_t position_ = 0;
  AVIOContext* io_ = nullptr;
  AVFormatContext* format_ = nullptr;
  std::string error_;
};

}  // namespace vod::media::detail
