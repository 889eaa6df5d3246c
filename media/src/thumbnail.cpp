// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/media/thumbnail.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "demuxer.hpp"

namespace vod::media {

namespace {

// One owner per libav object.
struct CodecFree {
  void operator()(AVCodecContext* c) const noexcept { avcodec_free_context(&c); }
};
struct FrameFree {
  void operator()(AVFrame* f) const noexcept { av_frame_free(&f); }
};
struct PacketFree {
  void operator()(AVPacket* p) const noexcept { av_packet_free(&p); }
};
struct SwsFree {
  void operator()(SwsContext* s) const noexcept { sws_freeContext(s); }
};
using CodecPtr = std::unique_ptr<AVCodecContext, CodecFree>;
using FramePtr = std::unique_ptr<AVFrame, FrameFree>;
using PacketPtr = std::unique_ptr<AVPacket, PacketFree>;
using SwsPtr = std::unique_ptr<SwsContext, SwsFree>;

FramePtr new_frame() {
  FramePtr f(av_frame_alloc());
  if (!f) throw ThumbnailError("out of memory for a frame");
  return f;
}

// Encodes a full-range 4:2:0 frame as one baseline JPEG.
std::vector<std::uint8_t> encode_jpeg(AVFrame* frame, int quality) {
  detail::quiet_libav();
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_MJPEG);
  if (!codec) throw ThumbnailError("this libavcodec has no MJPEG encoder");
  CodecPtr enc(avcodec_alloc_context3(codec));
  if (!enc) throw ThumbnailError("out of memory for the JPEG encoder");
  enc->width = frame->width;
  enc->height = frame->height;
  enc->pix_fmt = AV_PIX_FMT_YUV420P;  // with full range: what JPEG means by 4:2:0
  enc->color_range = AVCOL_RANGE_JPEG;
  enc->time_base = AVRational{1, 25};
  enc->flags |= AV_CODEC_FLAG_QSCALE;
  enc->global_quality = FF_QP2LAMBDA * std::clamp(quality, 2, 31);
  if (int err = avcodec_open2(enc.get(), codec, nullptr); err < 0)
    throw ThumbnailError("cannot open the JPEG encoder: " + detail::av_error(err));
  frame->quality = enc->global_quality;
  frame->pts = 0;
  if (int err = avcodec_send_frame(enc.get(), frame); err < 0)
    throw ThumbnailError("the JPEG encoder refused the frame: " + detail::av_error(err));
  avcodec_send_frame(enc.get(), nullptr);
  PacketPtr packet(av_packet_alloc());
  if (!packet) throw ThumbnailError("out of memory for a packet");
  if (int err = avcodec_receive_packet(enc.get(), packet.get()); err < 0)
    throw ThumbnailError("the JPEG encoder gave no image: " + detail::av_error(err));
  return {packet->data, packet->data + packet->size};
}

// The thumbnail's size: options.width wide (or max_height high) at the frame's display aspect,
// both even (4:2:0).
std::pair<int, int> scaled_size(const AVFrame* f, const ThumbnailOptions& o) {
  double aspect = static_cast<double>(f->width) / f->height;
  if (f->sample_aspect_ratio.num > 0 && f->sample_aspect_ratio.den > 0) aspect *= av_q2d(f->sample_aspect_ratio);
  double w = o.width, h = w / aspect;
  if (h > o.max_height) h = o.max_height, w = h * aspect;
  auto even = [](double v) { return std::max(2, static_cast<int>(std::lround(v / 2)) * 2); };
  return {even(w), even(h)};
}

Thumbnail scale_and_encode(const AVFrame* decoded, const ThumbnailOptions& o) {
  const auto [w, h] = scaled_size(decoded, o);
  SwsPtr sws(sws_getContext(decoded->width, decoded->height, static_cast<AVPixelFormat>(decoded->format), w, h, AV_PIX_FMT_YUV420P,
                            SWS_BICUBIC, nullptr, nullptr, nullptr));
  if (!sws)
    throw ThumbnailError(std::string("libswscale cannot convert from ") + av_get_pix_fmt_name(static_cast<AVPixelFormat>(decoded->format)));
  // Video is limited range (unless it says otherwise), JPEG full range.
  const int* coefficients = sws_getCoefficients(SWS_CS_DEFAULT);
  sws_setColorspaceDetails(sws.get(), coefficients, decoded->color_range == AVCOL_RANGE_JPEG ? 1 : 0, coefficients, 1, 0, 1 << 16, 1 << 16);
  FramePtr out = new_frame();
  out->width = w;
  out->height = h;
  out->format = AV_PIX_FMT_YUV420P;
  out->color_range = AVCOL_RANGE_JPEG;
  if (av_frame_get_buffer(out.get(), 0) < 0) throw ThumbnailError("out of memory for the scaled frame");
  sws_scale(sws.get(), decoded->data, decoded->linesize, 0, decoded->height, out->data, out->linesize);
  Thumbnail t;
  t.jpeg = encode_jpeg(out.get(), o.quality);
  t.width = static_cast<unsigned>(w);
  t.height = static_cast<unsigned>(h);
  return t;
}

// A decoded frame fit to show: complete, and without concealed errors.
bool clean(const AVFrame* f) { return f->decode_error_flags == 0 && !(f->flags & AV_FRAME_FLAG_CORRUPT) && f->width > 0 && f->height > 0; }

}  // namespace

Thumbnail make_thumbnail(std::uint64_t size, const ReadAt& read_at, std::optional<FramePosition> position,
                         const ThumbnailOptions& options) {
  detail::Demuxer demuxer(detail::ByteSource{size, read_at}, {.find_stream_info = false, .time_limit = options.time_limit});
  auto why = [&](std::string text) {
    if (!demuxer.read_error().empty()) text += " (reading the movie: " + demuxer.read_error() + ")";
    if (demuxer.expired() && text.find("gave up") == std::string::npos) text += " (" + demuxer.expiry_text() + ")";
    return ThumbnailError(text);
  };
  if (!demuxer.ok()) throw why(demuxer.nested_open().empty() ? demuxer.error() : "not decoded: " + demuxer.nested_open());
  AVFormatContext* fmt = demuxer.format();
  int video = -1;
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    const AVStream* s = fmt->streams[i];
    const bool usable = s->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !(s->disposition & AV_DISPOSITION_ATTACHED_PIC);
    if (usable && video < 0) video = static_cast<int>(i);
    else fmt->streams[i]->discard = AVDISCARD_ALL;  // read only the video's packets
  }
  if (video < 0) throw why("the movie has no video stream");
  AVStream* stream = fmt->streams[video];
  const AVCodec* codec = avcodec_find_decoder(stream->codecpar->codec_id);
  if (!codec) throw why(std::string("no decoder for ") + avcodec_get_name(stream->codecpar->codec_id));
  CodecPtr dec(avcodec_alloc_context3(codec));
  if (!dec) throw ThumbnailError("out of memory for the decoder");
  if (avcodec_parameters_to_context(dec.get(), stream->codecpar) < 0) throw why("bad codec parameters");
  dec->thread_count = 1;                        // one frame: threads would only add latency
  dec->flags &= ~AV_CODEC_FLAG_OUTPUT_CORRUPT;  // a damaged picture is no thumbnail
  if (int err = avcodec_open2(dec.get(), codec, nullptr); err < 0)
    throw why("cannot open the " + std::string(codec->name) + " decoder: " + detail::av_error(err));

  if (position) {
    int err;
    if (position->byte_offset && std::strcmp(fmt->iformat->name, "mpegts") == 0) {
      err = av_seek_frame(fmt, video, static_cast<std::int64_t>(*position->byte_offset), AVSEEK_FLAG_BYTE);
    } else {
      // Index times count from the container's start; the stream's own start is usually that too.
      std::int64_t ts = av_rescale_q(static_cast<std::int64_t>(position->time_us), AVRational{1, AV_TIME_BASE}, stream->time_base);
      if (stream->start_time != AV_NOPTS_VALUE) ts += stream->start_time;
      err = av_seek_frame(fmt, video, ts, AVSEEK_FLAG_BACKWARD);
    }
    if (err < 0) throw why("cannot seek to " + std::to_string(position->time_us / 1000) + " ms: " + detail::av_error(err));
  }

  PacketPtr packet(av_packet_alloc());
  FramePtr frame = new_frame();
  if (!packet) throw ThumbnailError("out of memory for a packet");
  std::string last_error = "no frame decoded";
  auto take = [&]() -> std::optional<Thumbnail> {
    while (avcodec_receive_frame(dec.get(), frame.get()) >= 0) {
      if (!clean(frame.get())) {
        last_error = "the decoded pictures are damaged";
        av_frame_unref(frame.get());
        continue;
      }
      Thumbnail t = scale_and_encode(frame.get(), options);
      const std::int64_t pts = frame->best_effort_timestamp;
      if (pts != AV_NOPTS_VALUE) t.pts_us = av_rescale_q(pts, stream->time_base, AVRational{1, AV_TIME_BASE});
      return t;
    }
    return std::nullopt;
  };
  for (unsigned packets = 0; packets < options.max_packets;) {
    if (demuxer.expired()) throw why("no picture: " + demuxer.expiry_text());
    const int err = av_read_frame(fmt, packet.get());
    if (err < 0) {
      if (err != AVERROR_EOF) last_error = "demuxing stopped: " + detail::av_error(err);
      break;
    }
    if (packet->stream_index == video) {
      ++packets;
      if (int sent = avcodec_send_packet(dec.get(), packet.get()); sent < 0 && sent != AVERROR(EAGAIN))
        last_error = "the decoder failed: " + detail::av_error(sent);
    }
    av_packet_unref(packet.get());
    if (auto t = take()) return *t;
  }
  avcodec_send_packet(dec.get(), nullptr);  // drain what the decoder holds back
  if (auto t = take()) return *t;
  throw why(last_error);
}

Thumbnail make_thumbnail(std::span<const std::uint8_t> bytes, std::optional<FramePosition> position, const ThumbnailOptions& options) {
  const detail::ByteSource source = detail::memory_source(bytes);
  return make_thumbnail(source.size, source.read_at, position, options);
}

std::vector<std::uint8_t> placeholder_jpeg(unsigned width, unsigned height) {
  FramePtr f = new_frame();
  f->width = static_cast<int>(std::max(2u, width & ~1u));
  f->height = static_cast<int>(std::max(2u, height & ~1u));
  f->format = AV_PIX_FMT_YUV420P;
  f->color_range = AVCOL_RANGE_JPEG;
  if (av_frame_get_buffer(f.get(), 0) < 0) throw ThumbnailError("out of memory for the placeholder");
  // A dark slate grey: Y 48, neutral chroma.
  for (int y = 0; y < f->height; ++y) std::memset(f->data[0] + y * f->linesize[0], 48, static_cast<std::size_t>(f->width));
  for (int p = 1; p <= 2; ++p)
    for (int y = 0; y < f->height / 2; ++y) std::memset(f->data[p] + y * f->linesize[p], 128, static_cast<std::size_t>(f->width / 2));
  return encode_jpeg(f.get(), 5);
}

}  // namespace vod::media
