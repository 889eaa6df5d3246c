// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/media/stream_codecs.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include "demuxer.hpp"

namespace vod::media {

namespace {

// An SPS NAL unit's first bytes: the header (type 7), then profile_idc, the constraint flags and
// level_idc (ITU-T H.264, 7.3.2.1.1).
std::optional<AvcParameters> from_sps(std::span<const std::uint8_t> nal) {
  if (nal.size() < 4 || (nal[0] & 0x1f) != 7) return std::nullopt;
  return AvcParameters{nal[1], nal[2], nal[3]};
}

}  // namespace

std::optional<AvcParameters> avc_parameters(std::span<const std::uint8_t> x) {
  if (x.size() >= 4 && x[0] == 1) {
    // avcC: version 1, then the profile, compatibility (constraint flags) and level of its SPS.
    return AvcParameters{x[1], x[2], x[3]};
  }
  // Annex B: NAL units after 00 00 01 (or 00 00 00 01) start codes.
  for (std::size_t i = 0; i + 3 < x.size(); ++i) {
    if (x[i] != 0 || x[i + 1] != 0 || x[i + 2] != 1) continue;
    if (auto p = from_sps(x.subspan(i + 3))) return p;
  }
  return std::nullopt;
}

StreamCodecs stream_codecs(std::uint64_t size, const std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)>& read_at,
                           std::chrono::milliseconds time_limit) {
  detail::quiet_libav();
  StreamCodecs out;
  detail::Demuxer demuxer(detail::ByteSource{size, read_at}, {.find_stream_info = true, .time_limit = time_limit});
  if (!demuxer.ok()) {
    out.note = "the codec headers could not be read: " + demuxer.error();
    return out;
  }
  AVFormatContext* fmt = demuxer.format();
  if (fmt->start_time != AV_NOPTS_VALUE) out.start_time_us = fmt->start_time;
  const int video = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  const int audio = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0);
  if (video >= 0) {
    const AVCodecParameters* p = fmt->streams[video]->codecpar;
    out.video_codec = avcodec_get_name(p->codec_id);
    if (p->codec_id == AV_CODEC_ID_H264) {
      if (p->extradata && p->extradata_size > 0) out.avc = avc_parameters({p->extradata, static_cast<std::size_t>(p->extradata_size)});
      if (!out.avc && p->profile > 0 && p->level > 0) {
        // No SPS in the extradata: libavcodec's profile (its low byte is profile_idc; the constrained
        // baseline bit is constraint_set1) and level.
        const unsigned flags = (p->profile & FF_PROFILE_H264_CONSTRAINED) ? 0x40u : 0u;
        out.avc = AvcParameters{static_cast<unsigned>(p->profile & 0xff), flags, static_cast<unsigned>(p->level)};
      }
      if (!out.avc) out.note += "no H.264 SPS in the first packets; ";
    }
  }
  if (audio >= 0) {
    const AVCodecParameters* p = fmt->streams[audio]->codecpar;
    out.audio_codec = avcodec_get_name(p->codec_id);
    if (p->codec_id == AV_CODEC_ID_AAC) {
      // libavcodec's AAC profiles are the MPEG-4 audio object type minus one (FF_PROFILE_AAC_*);
      // the MPEG-2 ones are LC and HE.
      if (p->profile == FF_PROFILE_MPEG2_AAC_LOW) out.aac_object_type = 2;
      else if (p->profile == FF_PROFILE_MPEG2_AAC_HE) out.aac_object_type = 5;
      else if (p->profile >= 0 && p->profile < 45) out.aac_object_type = static_cast<unsigned>(p->profile) + 1;
      else out.note += "the AAC profile is not known; ";
    }
  }
  return out;
}

}  // namespace vod::media
