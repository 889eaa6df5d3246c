// SPDX-License-Identifier: LGPL-2.1-or-later
#include "demuxer.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace vod::media::detail {

namespace {
constexpr int kIoBufferSize = 256 * 1024;
}

void quiet_libav() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_level(AV_LOG_FATAL); });
}

std::string av_error(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

ByteSource memory_source(std::span<const std::uint8_t> bytes) {
  auto read_at = [bytes](std::uint64_t offset, std::span<std::uint8_t> dest) -> std::size_t {
    if (offset >= bytes.size()) return 0;
    const std::size_t n = std::min<std::size_t>(dest.size(), bytes.size() - offset);
    std::memcpy(dest.data(), bytes.data() + offset, n);
    return n;
  };
  return {bytes.size(), read_at};
}

Demuxer::Demuxer(std::span<const std::uint8_t> bytes, bool find_stream_info) : Demuxer(memory_source(bytes), find_stream_info) {}

Demuxer::Demuxer(ByteSource source, bool find_stream_info) : source_(std::move(source)) { open(find_stream_info); }

void Demuxer::open(bool find_stream_info) {
  quiet_libav();
  if (source_.size == 0) {
    error_ = "the file is empty";
    return;
  }
  auto* buffer = static_cast<unsigned char*>(av_malloc(kIoBufferSize));
  if (!buffer) {
    error_ = "out of memory for the I/O buffer";
    return;
  }
  io_ = avio_alloc_context(buffer, kIoBufferSize, 0, this, &Demuxer::read, nullptr, &Demuxer::seek);
  if (!io_) {
    av_free(buffer);
    error_ = "out of memory for the I/O context";
    return;
  }
  AVFormatContext* fmt = avformat_alloc_context();
  if (!fmt) {
    error_ = "out of memory for the format context";
    return;
  }
  fmt->pb = io_;
  fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
  // avformat_open_input frees `fmt` itself when it fails.
  if (int err = avformat_open_input(&fmt, nullptr, nullptr, nullptr); err < 0) {
    error_ = "not a container libavformat recognises (" + av_error(err) + ")";
    return;
  }
  format_ = fmt;
  if (find_stream_info) {
    if (int err = avformat_find_stream_info(format_, nullptr); err < 0) {
      error_ = "cannot read stream parameters (" + av_error(err) + ")";
      avformat_close_input(&format_);
    }
  }
}

Demuxer::~Demuxer() {
  if (format_) avformat_close_input(&format_);
  if (io_) {
    av_freep(&io_->buffer);
    avio_context_free(&io_);
  }
}

int Demuxer::read(void* opaque, std::uint8_t* buf, int size) {
  auto* self = static_cast<Demuxer*>(opaque);
  if (self->position_ >= self->source_.size) return AVERROR_EOF;
  const std::size_t want = std::min<std::size_t>(static_cast<std::size_t>(size), self->source_.size - self->position_);
  std::size_t n = 0;
  try {  // no exception may cross libavformat's C frames
    n = self->source_.read_at(self->position_, std::span<std::uint8_t>(buf, want));
  } catch (const std::exception& e) {
    self->read_error_ = e.what();
    return AVERROR(EIO);
  }
  if (n == 0) return AVERROR_EOF;
  self->position_ += n;
  return static_cast<int>(n);
}

std::int64_t Demuxer::seek(void* opaque, std::int64_t offset, int whence) {
  auto* self = static_cast<Demuxer*>(opaque);
  const auto size = static_cast<std::int64_t>(self->source_.size);
  std::int64_t target;
  switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return size;
    case SEEK_SET: target = offset; break;
    case SEEK_CUR: target = static_cast<std::int64_t>(self->position_) + offset; break;
    case SEEK_END: target = size + offset; break;
    default: return AVERROR(EINVAL);
  }
  if (target < 0 || target > size) return AVERROR(EINVAL);
  self->position_ = static_cast<std::uint64_t>(target);
  return target;
}

}  // namespace vod::media::detail
