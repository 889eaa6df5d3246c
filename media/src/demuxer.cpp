// SPDX-License-Identifier: LGPL-2.1-or-later
#include "demuxer.hpp"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string_view>

namespace vod::media::detail {

namespace {
constexpr int kIoBufferSize = 256 * 1024;

// True when `name` ("mov,mp4,...", as AVInputFormat names are) has an item of `list`.
bool any_of_names(std::string_view name, std::string_view list) {
  auto items = [](std::string_view text, auto&& each) {
    while (!text.empty()) {
      const auto comma = text.find(',');
      if (each(text.substr(0, comma))) return true;
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
    return false;
  };
  return items(name, [&](std::string_view n) { return items(list, [&](std::string_view l) { return n == l; }); });
}
}  // namespace

void quiet_libav() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_level(AV_LOG_FATAL); });
}

std::string av_error(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

bool names_other_resources(const char* format_name) {
  // hls: playlists of segment URLs; dash: MPD manifests; concat: ffconcat scripts of file names;
  // imf: composition playlists; sdp, rtp, rtsp: session descriptions that open sockets;
  // avisynth, vapoursynth: scripts.
  return format_name && any_of_names(format_name, "hls,applehttp,dash,concat,imf,sdp,rtp,rtsp,avisynth,vapoursynth");
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

Demuxer::Demuxer(std::span<const std::uint8_t> bytes, const DemuxOptions& options) : Demuxer(memory_source(bytes), options) {}

Demuxer::Demuxer(ByteSource source, const DemuxOptions& options)
    : source_(std::move(source)), started_(Clock::now()), deadline_(started_ + options.time_limit) {
  open(options.find_stream_info, options.formats);
}

std::string Demuxer::expiry_text() const {
  const auto s = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - started_).count();
  return "gave up after " + std::to_string(s / 1000) + "." + std::to_string(s % 1000 / 100) + " s";
}

void Demuxer::open(bool find_stream_info, const char* formats) {
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
  // What the bytes are, from the demuxers' probe functions alone: none of them opens anything.
  const AVInputFormat* detected = nullptr;
  if (int err = av_probe_input_buffer2(io_, &detected, "", nullptr, 0, 0); err < 0 || !detected) {
    error_ = expired() ? "probing the format " + expiry_text() : "not a container libavformat recognises (" + av_error(err) + ")";
    return;
  }
  if (!any_of_names(detected->name, formats)) {
    unserved_format_ = detected->name;
    if (names_other_resources(detected->name))
      nested_open_ = "it is a '" + unserved_format_ + "' file, which names other files or URLs to open";
    error_ = "a '" + unserved_format_ +
             "' file, not a container this server serves (MP4, MPEG-TS, Matroska, WebM, AVI, FLV, MPEG-PS, MP3, AAC, FLAC, Ogg, WAV)";
    return;
  }
  AVFormatContext* fmt = avformat_alloc_context();
  if (!fmt) {
    error_ = "out of memory for the format context";
    return;
  }
  fmt->pb = io_;
  fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
  fmt->format_whitelist = av_strdup(formats);
  fmt->protocol_whitelist = av_strdup("");  // no protocol at all: every nested URL fails
  fmt->io_open = &Demuxer::refuse_open;     // and no demuxer may open one through the context
  fmt->opaque = this;
  fmt->interrupt_callback = AVIOInterruptCB{&Demuxer::interrupted, this};
  if (!fmt->format_whitelist || !fmt->protocol_whitelist) {
    avformat_free_context(fmt);
    error_ = "out of memory for the format context";
    return;
  }
  // avformat_open_input frees `fmt` itself when it fails.
  if (int err = avformat_open_input(&fmt, nullptr, detected, nullptr); err < 0) {
    error_ = expired() ? "reading the header " + expiry_text() : "not a container libavformat recognises (" + av_error(err) + ")";
    if (!refused_open_.empty()) error_ = nested_open_;
    return;
  }
  format_ = fmt;
  if (find_stream_info) {
    if (int err = avformat_find_stream_info(format_, nullptr); err < 0) {
      error_ = expired() ? "reading stream parameters " + expiry_text() : "cannot read stream parameters (" + av_error(err) + ")";
      avformat_close_input(&format_);
    }
  }
  if (!refused_open_.empty() && format_) {
    error_ = nested_open_;
    avformat_close_input(&format_);
  }
}

Demuxer::~Demuxer() {
  if (format_) avformat_close_input(&format_);
  if (io_) {
    av_freep(&io_->buffer);
    avio_context_free(&io_);
  }
}

int Demuxer::interrupted(void* opaque) { return static_cast<const Demuxer*>(opaque)->expired() ? 1 : 0; }

int Demuxer::refuse_open(AVFormatContext* s, AVIOContext** pb, const char* url, int, AVDictionary**) {
  auto* self = static_cast<Demuxer*>(s->opaque);
  *pb = nullptr;
  if (self->refused_open_.empty()) {
    self->refused_open_ = url ? std::string(url).substr(0, 200) : "(no name)";
    self->nested_open_ = std::string("its '") + (s->iformat ? s->iformat->name : "?") + "' data asks to open " + self->refused_open_;
  }
  return AVERROR(EPERM);
}

int Demuxer::read(void* opaque, std::uint8_t* buf, int size) {
  auto* self = static_cast<Demuxer*>(opaque);
  if (self->expired()) return AVERROR_EXIT;  // a slow source does not hold the caller past its limit
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
