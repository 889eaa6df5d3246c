// SPDX-License-Identifier: LGPL-2.1-or-later
#include <algorithm>

#include "demuxer.hpp"
#include "vod/media/probe.hpp"

namespace vod::media {

proto::KeyframeIndex index_keyframes(Bytes bytes, const MediaInfo& info, const Progress& progress) {
  return index_keyframes(bytes.size(), detail::memory_source(bytes).read_at, info, progress);
}

proto::KeyframeIndex index_keyframes(std::uint64_t size, const ReadAt& read_at, const MediaInfo& info, const Progress& progress) {
  proto::KeyframeIndex index;
  index.movie_size = std::max<std::uint64_t>(size, 1);
  if (!info.is_media || info.video_codec.empty()) return index;
  // MPEG-TS packets carry everything a decoder needs from any keyframe on (SPS/PPS are repeated in
  // band); MP4 and Matroska keep codec setup in their header (moov, Tracks).
  index.flags = info.container == "mpegts" ? proto::kIndexDirectEntry : proto::kIndexNeedsHeader;

  // Every packet of the file is read once: time for that at a modest 20 MB/s, and then some.
  const auto limit = std::chrono::seconds(30) + std::chrono::seconds(size / (20u << 20));
  detail::Demuxer demuxer(detail::ByteSource{size, read_at}, {.find_stream_info = false, .time_limit = limit});
  if (!demuxer.ok()) return index;
  AVFormatContext* fmt = demuxer.format();
  // Without find_stream_info, pick the first video stream the container declares.
  int video = -1;
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    const bool is_video =
        fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !(fmt->streams[i]->disposition & AV_DISPOSITION_ATTACHED_PIC);
    if (is_video && video < 0) video = static_cast<int>(i);
    else fmt->streams[i]->discard = AVDISCARD_ALL;  // demux only what the index needs
  }
  if (video < 0) return index;
  const AVRational time_base = fmt->streams[video]->time_base;
  // Times count from the container's start (what a player shows as 0:00), which the probe found
  // with find_stream_info; this pass skips that to read packets only once.
  const std::int64_t origin = info.start_time_us;

  AVPacket* packet = av_packet_alloc();
  const std::uint64_t step = std::max<std::uint64_t>(size / 100, 1);
  std::uint64_t next_report = step;
  // Reading stops at the end or at the first error: a truncated file keeps the keyframes before it.
  while (av_read_frame(fmt, packet) >= 0) {
    if (packet->stream_index == video && (packet->flags & AV_PKT_FLAG_KEY) && packet->pos >= 0 &&
        static_cast<std::uint64_t>(packet->pos) < size) {
      const std::int64_t ts = packet->pts != AV_NOPTS_VALUE ? packet->pts : packet->dts;
      if (ts != AV_NOPTS_VALUE) {
        const std::int64_t us = av_rescale_q(ts, time_base, AVRational{1, AV_TIME_BASE}) - origin;
        index.entries.push_back({static_cast<std::uint64_t>(std::max<std::int64_t>(us, 0)), static_cast<std::uint64_t>(packet->pos)});
      }
    }
    av_packet_unref(packet);
    if (progress && demuxer.position() >= next_report) {
      progress(demuxer.position(), size);
      next_report = demuxer.position() + step;
    }
  }
  av_packet_free(&packet);
  if (progress) progress(size, size);
  // Presentation order of keyframes is decode order for the closed GOPs we index, but a damaged
  // file may disagree; the index layout requires non-decreasing times.
  std::stable_sort(index.entries.begin(), index.entries.end(),
                   [](const proto::Keyframe& a, const proto::Keyframe& b) { return a.time_us < b.time_us; });
  return index;
}

std::optional<proto::KeyframeIndex> container_index(std::uint64_t size, const ReadAt& read_at, const MediaInfo& info) {
  const bool mp4 = info.container == "mp4" && !info.fragmented, mkv = info.container == "matroska" || info.container == "webm";
  if (!info.is_media || info.video_codec.empty() || !(mp4 || mkv)) return std::nullopt;
  detail::Demuxer demuxer(detail::ByteSource{size, read_at}, {.find_stream_info = false, .time_limit = std::chrono::seconds(30)});
  if (!demuxer.ok()) return std::nullopt;
  AVFormatContext* fmt = demuxer.format();
  int video = -1;
  for (unsigned i = 0; i < fmt->nb_streams && video < 0; ++i)
    if (fmt->streams[i]->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !(fmt->streams[i]->disposition & AV_DISPOSITION_ATTACHED_PIC))
      video = static_cast<int>(i);
  if (video < 0) return std::nullopt;
  AVStream* st = fmt->streams[video];
  // Matroska reads its Cues at the first seek (matroskadec defers them); MP4's sample tables are
  // in the index once the header is read.
  if (mkv && av_seek_frame(fmt, video, 0, AVSEEK_FLAG_BACKWARD) < 0) return std::nullopt;
  proto::KeyframeIndex index;
  index.movie_size = std::max<std::uint64_t>(size, 1);
  index.flags = proto::kIndexNeedsHeader;
  const int n = avformat_index_get_entries_count(st);
  for (int i = 0; i < n; ++i) {
    const AVIndexEntry* e = avformat_index_get_entry(st, i);
    if (!e || !(e->flags & AVINDEX_KEYFRAME) || e->pos < 0 || static_cast<std::uint64_t>(e->pos) >= size || e->timestamp == AV_NOPTS_VALUE)
      continue;
    const std::int64_t us = av_rescale_q(e->timestamp, st->time_base, AVRational{1, AV_TIME_BASE}) - info.start_time_us;
    index.entries.push_back({static_cast<std::uint64_t>(std::max<std::int64_t>(us, 0)), static_cast<std::uint64_t>(e->pos)});
  }
  if (index.entries.empty()) return std::nullopt;
  std::stable_sort(index.entries.begin(), index.entries.end(),
                   [](const proto::Keyframe& a, const proto::Keyframe& b) { return a.time_us < b.time_us; });
  return index;
}

}  // namespace vod::media
