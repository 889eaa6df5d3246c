// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/media/fmp4_remux.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
}

#include <algorithm>
#include <memory>
#include <optional>

#include "demuxer.hpp"
#include "muxer_output.hpp"

namespace vod::media {

namespace {

// Decode times are shifted forward by this much in every segment alike: B-frames give the first
// packets negative decode times, which a tfdt cannot hold, and the same shift everywhere keeps the
// segments continuous and audio and video in step.
// AV_TIME_BASE_Q as a C++ value (the macro is a C compound literal).
constexpr AVRational kMicroseconds{1, AV_TIME_BASE};

constexpr std::int64_t kShiftUs = kFmp4ShiftUs;

struct PacketFree {
  void operator()(AVPacket* p) const noexcept { av_packet_free(&p); }
};

[[noreturn]] void fail(const std::string& what, int err) { throw Fmp4Error(what + ": " + detail::av_error(err)); }

bool mp4_can_carry(AVCodecID id) {
  switch (id) {
    case AV_CODEC_ID_H264:
    case AV_CODEC_ID_HEVC:
    case AV_CODEC_ID_AV1:
    case AV_CODEC_ID_VP9:
    case AV_CODEC_ID_AAC:
    case AV_CODEC_ID_MP3:
    case AV_CODEC_ID_AC3:
    case AV_CODEC_ID_EAC3:
    case AV_CODEC_ID_OPUS:
    case AV_CODEC_ID_FLAC: return true;
    default: return false;
  }
}

bool ts_can_carry(AVCodecID id) {
  switch (id) {
    case AV_CODEC_ID_H264:
    case AV_CODEC_ID_HEVC:
    case AV_CODEC_ID_AAC:
    case AV_CODEC_ID_MP3:
    case AV_CODEC_ID_AC3:
    case AV_CODEC_ID_EAC3:
    case AV_CODEC_ID_OPUS: return true;
    default: return false;
  }
}

// The movie opened, the streams chosen (best video, best audio) and a muxer with their tracks:
// fragmented MP4, or with `ts` MPEG-TS (the video and every audio stream it can carry).
struct Remux {
  detail::Demuxer in;
  bool ts;
  detail::MuxerOutput out;
  int video = -1, audio = -1;    // input stream indexes
  std::vector<int> map;          // input stream -> output stream, -1 for none
  std::size_t header_bytes = 0;  // ftyp + moov

  Remux(std::uint64_t size, const ReadBytesAt& read_at, const Fmp4Options& options, unsigned fragment_index, bool mpegts = false)
      : in(detail::ByteSource{size, read_at},
           {.find_stream_info = true, .time_limit = options.time_limit}),  // Matroska gives decode times only with it
        ts(mpegts),
        out(mpegts ? "mpegts" : "mp4", mpegts ? "a title's MPEG-TS segment" : "HLS fMP4") {
    if (!in.ok()) throw Fmp4Error("the movie cannot be opened for remuxing: " + in.error());
    AVFormatContext* ifmt = in.format();
    using Tracks = Fmp4Options::Tracks;
    if (options.tracks != Tracks::audio) video = av_find_best_stream(ifmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (options.tracks == Tracks::best) audio = av_find_best_stream(ifmt, AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0);
    if (options.tracks == Tracks::audio) {
      const int k = options.audio_stream;
      if (k < 0 || k >= static_cast<int>(ifmt->nb_streams) || ifmt->streams[k]->codecpar->codec_type != AVMEDIA_TYPE_AUDIO)
        throw Fmp4Error("the movie has no audio stream " + std::to_string(k));
      audio = k;
    }
    const auto can_carry = ts ? ts_can_carry : mp4_can_carry;
    const char* container = ts ? "MPEG-TS" : "fragmented MP4";
    if (video >= 0 && !can_carry(ifmt->streams[video]->codecpar->codec_id)) video = -1;
    if (audio >= 0 && !can_carry(ifmt->streams[audio]->codecpar->codec_id)) audio = -1;
    if (video < 0 && audio < 0) throw Fmp4Error(std::string("no video or audio stream that ") + container + " can carry");
    if (options.tracks == Tracks::video && video < 0) throw Fmp4Error(std::string("no video stream that ") + container + " can carry");
    map.assign(ifmt->nb_streams, -1);
    std::vector<int> chosen{video, audio};
    if (ts)  // every audio stream, in the container's order (a title's languages)
      for (int i = 0; i < static_cast<int>(ifmt->nb_streams); ++i)
        if (i != audio && ifmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_AUDIO && can_carry(ifmt->streams[i]->codecpar->codec_id))
          chosen.push_back(i);
    for (int i : chosen) {
      if (i < 0) continue;
      AVStream* s = avformat_new_stream(out.format, nullptr);
      if (!s) throw Fmp4Error("out of memory for a track");
      if (int err = avcodec_parameters_copy(s->codecpar, ifmt->streams[i]->codecpar); err < 0) fail("copying codec parameters", err);
      s->codecpar->codec_tag = 0;
      s->time_base = ifmt->streams[i]->time_base;
      av_dict_copy(&s->metadata, ifmt->streams[i]->metadata, 0);  // the language, for a player's track menu
      map[static_cast<std::size_t>(i)] = s->index;
    }
    // Fragments written when asked (frag_custom), a moov without samples up front (empty_moov),
    // offsets from the moof (default_base_moof), each fragment's decode time from its first packet
    // (frag_discont: segments are made one at a time, in any order), no edit list.
    // And no shift of its own: libavformat would move every segment's first decode time to 0.
    out.format->avoid_negative_ts = AVFMT_AVOID_NEG_TS_DISABLED;
    if (ts) {
      // MPEG-TS: the muxer writes PAT and PMT with the first packet, and inserts h264_mp4toannexb
      // (or HEVC's) itself, with the parameter sets before every keyframe.
      if (int err = avformat_write_header(out.format, nullptr); err < 0) fail("writing the MPEG-TS header", err);
      return;
    }
    AVDictionary* opts = nullptr;
    av_dict_set(&opts, "movflags", "+frag_custom+empty_moov+default_base_moof+frag_discont+omit_tfhd_offset", 0);
    av_dict_set(&opts, "use_editlist", "0", 0);
    av_dict_set_int(&opts, "fragment_index", fragment_index, 0);
    const int err = avformat_write_header(out.format, &opts);
    av_dict_free(&opts);
    if (err < 0) fail("writing the fMP4 header", err);
    avio_flush(out.io);
    header_bytes = out.bytes.size();
  }

  // Writes `p` (of input stream `in_index`) shifted, in the output's time base.
  void write(AVPacket* p) {
    const AVRational in_tb = in.format()->streams[p->stream_index]->time_base;
    const int target = map[static_cast<std::size_t>(p->stream_index)];
    const std::int64_t shift = av_rescale_q(kShiftUs, kMicroseconds, in_tb);
    if (p->dts != AV_NOPTS_VALUE) p->dts += shift;
    if (p->pts != AV_NOPTS_VALUE) p->pts += shift;
    av_packet_rescale_ts(p, in_tb, out.format->streams[target]->time_base);
    p->stream_index = target;
    p->pos = -1;
    if (int err = ts ? av_interleaved_write_frame(out.format, p) : av_write_frame(out.format, p); err < 0) fail("writing a packet", err);
  }
};

}  // namespace

std::vector<std::uint8_t> fmp4_init_segment(std::uint64_t size, const ReadBytesAt& read_at, const Fmp4Options& options) {
  detail::quiet_libav();
  Remux r(size, read_at, options, 1);
  r.out.bytes.resize(r.header_bytes);
  return std::move(r.out.bytes);
}

namespace {

// The packets of the segment from start_us to end_us, written to `r`'s muxer.
void remux_segment(Remux& r, std::uint64_t start_us, std::uint64_t end_us, unsigned sequence, const Fmp4Options& options) {
  AVFormatContext* ifmt = r.in.format();
  const std::int64_t origin = ifmt->start_time == AV_NOPTS_VALUE ? 0 : ifmt->start_time;  // index times count from here
  const auto at = [&](std::uint64_t us) { return origin + static_cast<std::int64_t>(us); };
  // To the keyframe at start_us (the index's own): decoding starts there, in every stream.
  const int seek_stream = r.video >= 0 ? r.video : r.audio;
  const AVRational seek_tb = ifmt->streams[seek_stream]->time_base;
  if (int err = av_seek_frame(ifmt, seek_stream, av_rescale_q(at(start_us), kMicroseconds, seek_tb), AVSEEK_FLAG_BACKWARD); err < 0)
    fail("seeking to " + std::to_string(start_us / 1000) + " ms", err);
  std::unique_ptr<AVPacket, PacketFree> p(av_packet_alloc());
  if (!p) throw Fmp4Error("out of memory for a packet");
  bool video_started = r.video < 0, video_done = r.video < 0;
  // Audio streams still before end_us: the best one, and MPEG-TS's others.
  std::vector<bool> audio_open(ifmt->nb_streams, false);
  std::size_t audio_left = 0;
  for (std::size_t i = 0; i < ifmt->nb_streams; ++i)
    if (r.map[i] >= 0 && static_cast<int>(i) != r.video) {
      audio_open[i] = true;
      ++audio_left;
    }
  unsigned packets = 0;
  while (!(video_done && audio_left == 0)) {
    if (++packets > options.max_packets)
      throw Fmp4Error("no end of the segment within " + std::to_string(options.max_packets) + " packets");
    const int err = av_read_frame(ifmt, p.get());
    if (err == AVERROR_EOF) break;
    if (err < 0) fail(r.in.expired() ? "reading the movie (" + r.in.expiry_text() + ")" : std::string("reading the movie"), err);
    const AVRational tb = ifmt->streams[p->stream_index]->time_base;
    const std::int64_t pts_us = p->pts == AV_NOPTS_VALUE ? AV_NOPTS_VALUE : av_rescale_q(p->pts, tb, kMicroseconds);
    if (p->stream_index == r.video && !video_done) {
      const bool key = p->flags & AV_PKT_FLAG_KEY;
      if (!video_started) {
        // The seek may land before the keyframe the segment starts at: skip up to it.
        if (!key || pts_us == AV_NOPTS_VALUE || pts_us < at(start_us) - 1000) {
          av_packet_unref(p.get());
          continue;
        }
        video_started = true;
      } else if (key && pts_us != AV_NOPTS_VALUE && pts_us >= at(end_us) - 1000) {
        video_done = true;  // the next segment's keyframe
        av_packet_unref(p.get());
        continue;
      }
      r.write(p.get());
      if (options.keyframe_only) video_done = true;
    } else if (audio_open[static_cast<std::size_t>(p->stream_index)]) {
      if (pts_us != AV_NOPTS_VALUE && pts_us >= at(end_us)) {
        audio_open[static_cast<std::size_t>(p->stream_index)] = false;
        --audio_left;
      } else if (pts_us != AV_NOPTS_VALUE && (pts_us >= at(start_us) || sequence == 0)) {
        r.write(p.get());
      }
    }
    av_packet_unref(p.get());
  }
  if (r.video >= 0 && !video_started) throw Fmp4Error("no keyframe at " + std::to_string(start_us / 1000) + " ms");
}

}  // namespace

std::vector<std::uint8_t> fmp4_media_segment(std::uint64_t size, const ReadBytesAt& read_at, std::uint64_t start_us, std::uint64_t end_us,
                                             unsigned sequence, const Fmp4Options& options) {
  detail::quiet_libav();
  Remux r(size, read_at, options, sequence + 1);
  remux_segment(r, start_us, end_us, sequence, options);
  if (int err = av_write_frame(r.out.format, nullptr); err < 0) fail("writing the fragment", err);  // frag_custom: the moof and mdat now
  avio_flush(r.out.io);
  std::vector<std::uint8_t> fragment(r.out.bytes.begin() + static_cast<std::ptrdiff_t>(r.header_bytes), r.out.bytes.end());
  if (fragment.empty())
    throw Fmp4Error("no packet between " + std::to_string(start_us / 1000) + " and " + std::to_string(end_us / 1000) + " ms");
  return fragment;
}

std::vector<std::uint8_t> mpegts_media_segment(std::uint64_t size, const ReadBytesAt& read_at, std::uint64_t start_us, std::uint64_t end_us,
                                               unsigned sequence, const Fmp4Options& options) {
  detail::quiet_libav();
  Fmp4Options best = options;
  best.tracks = Fmp4Options::Tracks::best;  // the video, the best audio stream and every other one MPEG-TS carries
  Remux r(size, read_at, best, sequence + 1, true);
  remux_segment(r, start_us, end_us, sequence, best);
  if (int err = av_write_trailer(r.out.format); err < 0) fail("ending the MPEG-TS segment", err);
  avio_flush(r.out.io);
  if (r.out.bytes.empty())
    throw Fmp4Error("no packet between " + std::to_string(start_us / 1000) + " and " + std::to_string(end_us / 1000) + " ms");
  return std::move(r.out.bytes);
}

}  // namespace vod::media
