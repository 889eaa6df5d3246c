// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/media/probe.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/dict.h>
#include <libavutil/log.h>
}

#include <algorithm>
#include <cstring>
#include <mutex>

#include "demuxer.hpp"

namespace vod::media {

namespace {

// A probe reads the header and decodes a few frames: seconds are plenty, whatever the file says.
constexpr auto kProbeTimeLimit = std::chrono::seconds(10);

bool has(const char* list, const char* item) {
  std::string_view names(list);
  while (!names.empty()) {
    const auto comma = names.find(',');
    if (names.substr(0, comma) == item) return true;
    if (comma == std::string_view::npos) break;
    names.remove_prefix(comma + 1);
  }
  return false;
}

bool webm_codec(const std::string& c) { return c.empty() || c == "vp8" || c == "vp9" || c == "av1" || c == "opus" || c == "vorbis"; }

void classify(MediaInfo& info, const AVInputFormat* fmt) {
  info.format_name = fmt->name;
  if (has(fmt->name, "mp4") || has(fmt->name, "mov")) {
    info.container = "mp4";
    info.mime_type = info.video_codec.empty() ? "audio/mp4" : "video/mp4";
  } else if (has(fmt->name, "mpegts")) {
    info.container = "mpegts";
    info.mime_type = "video/mp2t";
  } else if (has(fmt->name, "matroska")) {
    const bool webm = webm_codec(info.video_codec) && webm_codec(info.audio_codec);
    info.container = webm ? "webm" : "matroska";
    info.mime_type = webm ? "video/webm" : "video/x-matroska";
  } else {
    const std::string first = std::string(fmt->name).substr(0, std::string(fmt->name).find(','));
    info.container = first.substr(0, 15);
    info.mime_type = fmt->mime_type && *fmt->mime_type ? std::string(fmt->mime_type).substr(0, std::string(fmt->mime_type).find(','))
                                                       : "application/octet-stream";
  }
}

// Walks the top-level ISO-BMFF boxes looking for a 'moof'. libavformat reads fragments but does not
// say whether a file has them, so this small walk is written here: size (u32 BE), type, and a
// 64-bit size when size is 1; size 0 runs to the end of the file.
bool has_top_level_moof(const detail::ByteSource& source) {
  std::uint64_t at = 0;
  std::uint8_t head[16];
  auto be = [&](int from, int n) {
    std::uint64_t v = 0;
    for (int i = 0; i < n; ++i) v = (v << 8) | head[from + i];
    return v;
  };
  // A bounded walk: a file of a million tiny boxes is not worth reading to the end.
  for (int boxes = 0; boxes < 4096 && at + 8 <= source.size; ++boxes) {
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(16, source.size - at));
    if (source.read_at(at, std::span<std::uint8_t>(head, want)) < 8) return false;
    std::uint64_t size = be(0, 4);
    if (std::memcmp(head + 4, "moof", 4) == 0) return true;
    if (size == 1) {
      if (want < 16) return false;
      size = be(8, 8);
    } else if (size == 0) {
      return false;
    }
    if (size < 8 || size > source.size - at) return false;
    at += size;
  }
  return false;
}

std::string tag(const AVStream* s, const char* key) {
  const AVDictionaryEntry* e = av_dict_get(s->metadata, key, nullptr, 0);
  return e && e->value ? e->value : "";
}

std::vector<StreamTrack> stream_tracks(const AVFormatContext* fmt) {
  std::vector<StreamTrack> out;
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    const AVStream* s = fmt->streams[i];
    const AVCodecParameters* p = s->codecpar;
    StreamTrack t;
    if (p->codec_type == AVMEDIA_TYPE_AUDIO) {
      t.kind = StreamTrack::Kind::audio;
      t.channels = static_cast<unsigned>(std::max(p->ch_layout.nb_channels, 0));
    } else if (p->codec_type == AVMEDIA_TYPE_SUBTITLE) {
      t.kind = StreamTrack::Kind::subtitles;
      const AVCodecDescriptor* d = avcodec_descriptor_get(p->codec_id);
      t.text = d && (d->props & AV_CODEC_PROP_TEXT_SUB);
    } else {
      continue;
    }
    t.stream = static_cast<int>(i);
    t.codec = avcodec_get_name(p->codec_id);
    t.language = tag(s, "language");
    t.title = tag(s, "title");
    t.is_default = (s->disposition & AV_DISPOSITION_DEFAULT) != 0;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

MediaInfo probe(Bytes bytes, const std::string& name) { return probe(bytes.size(), detail::memory_source(bytes).read_at, name); }

MediaInfo probe(std::uint64_t size, const ReadAt& read_at, const std::string& name) {
  detail::quiet_libav();
  MediaInfo info;
  info.mime_type = "application/octet-stream";
  const detail::ByteSource source{size, read_at};
  detail::Demuxer demuxer(source, {.find_stream_info = true, .time_limit = kProbeTimeLimit});
  if (!demuxer.ok()) {
    if (!demuxer.nested_open().empty()) {
      info.refused = true;
      info.note = name + ": not served: " + demuxer.nested_open() + ", and rdma-vod opens nothing a movie's bytes name";
      return info;
    }
    info.note = name + ": not media, served as raw bytes: " + demuxer.error();
    return info;
  }
  AVFormatContext* fmt = demuxer.format();
  const int video = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  const int audio = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, nullptr, 0);
  if (video < 0 && audio < 0) {
    info.note = name + ": " + fmt->iformat->name + " without audio or video, served as raw bytes";
    return info;
  }
  info.is_media = true;
  if (video >= 0) {
    const AVCodecParameters* p = fmt->streams[video]->codecpar;
    info.video_codec = avcodec_get_name(p->codec_id);
    info.width = static_cast<std::uint16_t>(std::clamp(p->width, 0, 65535));
    info.height = static_cast<std::uint16_t>(std::clamp(p->height, 0, 65535));
  }
  if (audio >= 0) info.audio_codec = avcodec_get_name(fmt->streams[audio]->codecpar->codec_id);
  if (video >= 0) {
    const AVRational r = fmt->streams[video]->avg_frame_rate;
    if (r.num > 0 && r.den > 0) {
      info.frame_rate_num = static_cast<std::uint32_t>(r.num);
      info.frame_rate_den = static_cast<std::uint32_t>(r.den);
    }
  }
  info.tracks = stream_tracks(fmt);
  classify(info, fmt->iformat);
  if (fmt->start_time != AV_NOPTS_VALUE) info.start_time_us = fmt->start_time;
  if (fmt->duration != AV_NOPTS_VALUE && fmt->duration > 0) info.duration_us = static_cast<std::uint64_t>(fmt->duration);
  if (info.duration_us > 0)
    info.bitrate_bps = static_cast<std::uint64_t>(static_cast<double>(size) * 8e6 / static_cast<double>(info.duration_us));
  else if (fmt->bit_rate > 0) info.bitrate_bps = static_cast<std::uint64_t>(fmt->bit_rate);
  if (info.container == "mp4") info.fragmented = has_top_level_moof(source);
  if (info.duration_us == 0) info.note = name + ": media without a known duration";
  return info;
}

}  // namespace vod::media
