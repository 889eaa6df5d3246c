// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/media/remux.hpp"

#include <memory>
#include <stdexcept>

#include "demuxer.hpp"
#include "muxer_output.hpp"

namespace vod::media {

namespace {

[[noreturn]] void fail(const std::string& name, const std::string& what, int err) {
  throw std::runtime_error("remuxing " + name + " to MPEG-TS: " + what + ": " + detail::av_error(err));
}

}  // namespace

std::vector<std::uint8_t> remux_to_mpegts(std::span<const std::uint8_t> bytes, const std::string& name) {
  const auto limit = std::chrono::seconds(60) + std::chrono::seconds(bytes.size() / (10u << 20));
  detail::Demuxer in(bytes, {.find_stream_info = true, .time_limit = limit});
  if (!in.ok()) throw std::runtime_error("remuxing " + name + " to MPEG-TS: " + in.error());
  AVFormatContext* ifmt = in.format();

  detail::MuxerOutput out("mpegts", "remuxing " + name + " to MPEG-TS");
  std::vector<int> stream_map(ifmt->nb_streams, -1);
  int next = 0;
  for (unsigned i = 0; i < ifmt->nb_streams; ++i) {
    const AVCodecParameters* p = ifmt->streams[i]->codecpar;
    if (p->codec_type != AVMEDIA_TYPE_VIDEO && p->codec_type != AVMEDIA_TYPE_AUDIO) continue;
    AVStream* s = avformat_new_stream(out.format, nullptr);
    if (!s) throw std::runtime_error("remuxing " + name + ": out of memory");
    if (int err = avcodec_parameters_copy(s->codecpar, p); err < 0) fail(name, "copying codec parameters", err);
    s->codecpar->codec_tag = 0;
    s->time_base = ifmt->streams[i]->time_base;
    stream_map[i] = next++;
  }
  if (next == 0) throw std::runtime_error("remuxing " + name + " to MPEG-TS: no audio or video stream");
  out.bytes.reserve(bytes.size() + bytes.size() / 16);  // TS adds ~4-8% of packet overhead
  // The mpegts muxer inserts h264_mp4toannexb / hevc_mp4toannexb itself, and with them the
  // parameter sets before every keyframe: that is what makes each keyframe an entry point.
  if (int err = avformat_write_header(out.format, nullptr); err < 0) fail(name, "writing the header", err);

  AVPacket* packet = av_packet_alloc();
  int err = 0;
  while ((err = av_read_frame(ifmt, packet)) >= 0) {
    const int target = stream_map[static_cast<std::size_t>(packet->stream_index)];
    if (target >= 0) {
      av_packet_rescale_ts(packet, ifmt->streams[packet->stream_index]->time_base, out.format->streams[target]->time_base);
      packet->stream_index = target;
      packet->pos = -1;
      if (int w = av_interleaved_write_frame(out.format, packet); w < 0) {
        av_packet_free(&packet);
        fail(name, "writing a packet", w);
      }
    }
    av_packet_unref(packet);
  }
  av_packet_free(&packet);
  if (err != AVERROR_EOF) fail(name, "reading the input", err);
  if (int w = av_write_trailer(out.format); w < 0) fail(name, "writing the trailer", w);

  avio_flush(out.io);
  return std::move(out.bytes);
}

}  // namespace vod::media
