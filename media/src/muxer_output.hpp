// SPDX-License-Identifier: LGPL-2.1-or-later
// A libavformat muxer writing into memory: the output context and a custom AVIOContext that appends
// to a vector (avio_open_dyn_buf would cap the result at 2 GiB: it returns an int size). One owner
// for both. Used by the MPEG-TS remux (remux.cpp) and the fMP4 segments of HLS (fmp4_remux.cpp).
#pragma once

extern "C" {
#include <libavformat/avformat.h>
}

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace vod::media::detail {

struct MuxerOutput {
  AVFormatContext* format = nullptr;
  AVIOContext* io = nullptr;
  std::vector<std::uint8_t> bytes;

  // Allocates the muxer `format_name` and its output; throws std::runtime_error (`what` says for what).
  MuxerOutput(const char* format_name, const std::string& what) {
    if (avformat_alloc_output_context2(&format, nullptr, format_name, nullptr) < 0 || !format)
      throw std::runtime_error(what + ": this libavformat has no " + format_name + " muxer");
    auto* buffer = static_cast<unsigned char*>(av_malloc(kBuffer));
    io = buffer ? avio_alloc_context(buffer, kBuffer, 1, this, nullptr, &MuxerOutput::append, nullptr) : nullptr;
    if (!io) {
      av_free(buffer);
      throw std::runtime_error(what + ": out of memory for the output buffer");
    }
    format->pb = io;
    format->flags |= AVFMT_FLAG_CUSTOM_IO;
  }
  MuxerOutput(const MuxerOutput&) = delete;
  MuxerOutput& operator=(const MuxerOutput&) = delete;
  ~MuxerOutput() {
    if (io) {
      av_freep(&io->buffer);
      avio_context_free(&io);
    }
    if (format) avformat_free_context(format);
  }

 private:
  static constexpr int kBuffer = 256 * 1024;
  static int append(void* opaque, std::uint8_t* buf, int size) {
    auto& v = static_cast<MuxerOutput*>(opaque)->bytes;
    v.insert(v.end(), buf, buf + size);
    return size;
  }
};

}  // namespace vod::media::detail
