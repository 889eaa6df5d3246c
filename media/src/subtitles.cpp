// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/media/subtitles.hpp"

extern "C" {
#include <libavcodec/avcodec.h>
}

#include <algorithm>
#include <cstdio>
#include <memory>

#include "demuxer.hpp"
#include "vod/protocol/catalog_layout.hpp"

namespace vod::media {

namespace {

constexpr AVRational kMicroseconds{1, 1'000'000};

struct PacketFree {
  void operator()(AVPacket* p) const noexcept { av_packet_free(&p); }
};

// Appends `s` with invalid UTF-8 sequences replaced by U+FFFD (the catalog's rule of what UTF-8 is).
void append_utf8(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    if (const std::size_t n = proto::utf8_sequence(s, i)) {
      out.append(s.substr(i, n));
      i += n;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
}

std::string timestamp(std::uint64_t us) {
  const std::uint64_t ms = us / 1000;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02llu:%02llu:%02llu.%03llu", static_cast<unsigned long long>(ms / 3'600'000),
                static_cast<unsigned long long>(ms / 60'000 % 60), static_cast<unsigned long long>(ms / 1000 % 60),
                static_cast<unsigned long long>(ms % 1000));
  return buf;
}

}  // namespace

std::string cue_text(const std::string& codec, std::span<const std::uint8_t> payload) {
  std::string_view raw(reinterpret_cast<const char*>(payload.data()), payload.size());
  if (codec == "mov_text") {  // 3GPP timed text: a 16-bit length, the text, then style boxes
    if (raw.size() < 2) return "";
    const std::size_t n = (static_cast<std::size_t>(payload[0]) << 8) | payload[1];
    raw = raw.substr(2, std::min(n, raw.size() - 2));
  }
  std::string text;
  append_utf8(text, raw);
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\r') continue;
    if (text[i] == '{' && i + 1 < text.size() && text[i + 1] == '\\') {  // an ASS override block
      const std::size_t close = text.find('}', i);
      if (close != std::string::npos) {
        i = close;
        continue;
      }
    }
    if (text[i] == '\n' && (out.empty() || out.back() == '\n')) continue;  // no blank line: it would end the cue
    if (text[i] == '>' && out.size() >= 2 && out.compare(out.size() - 2, 2, "--") == 0) {
      out += "&gt;";
      continue;
    }
    out += static_cast<unsigned char>(text[i]) < 0x20 && text[i] != '\n' && text[i] != '\t' ? ' ' : text[i];
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::vector<Cue> read_cues(std::uint64_t size, const std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)>& read_at,
                           int stream, std::chrono::milliseconds time_limit, std::size_t max_cues) {
  detail::quiet_libav();
  detail::Demuxer in(
      detail::ByteSource{size, read_at},
      {.find_stream_info = false, .time_limit = time_limit, .formats = stream < 0 ? detail::kSubtitleFormats : detail::kServedFormats});
  if (!in.ok()) throw SubtitleError("cannot read the subtitles: " + in.error());
  AVFormatContext* fmt = in.format();
  const int want = stream < 0 ? 0 : stream;
  if (want >= static_cast<int>(fmt->nb_streams) || fmt->streams[want]->codecpar->codec_type != AVMEDIA_TYPE_SUBTITLE)
    throw SubtitleError("stream " + std::to_string(want) + " is not subtitles");
  const AVCodecDescriptor* d = avcodec_descriptor_get(fmt->streams[want]->codecpar->codec_id);
  if (!d || !(d->props & AV_CODEC_PROP_TEXT_SUB)) throw SubtitleError("stream " + std::to_string(want) + " is not text subtitles");
  const std::string codec = avcodec_get_name(fmt->streams[want]->codecpar->codec_id);
  for (unsigned i = 0; i < fmt->nb_streams; ++i)  // the movie's other packets are skipped where the demuxer can (MP4)
    if (static_cast<int>(i) != want) fmt->streams[i]->discard = AVDISCARD_ALL;
  const std::int64_t origin = fmt->start_time == AV_NOPTS_VALUE || stream < 0 ? 0 : fmt->start_time;
  std::vector<Cue> cues;
  std::unique_ptr<AVPacket, PacketFree> p(av_packet_alloc());
  if (!p) throw SubtitleError("out of memory for a packet");
  while (cues.size() < max_cues) {
    const int err = av_read_frame(fmt, p.get());
    if (err == AVERROR_EOF) break;
    if (err < 0)
      throw SubtitleError(in.expired() ? "reading the subtitles " + in.expiry_text() : "reading the subtitles: " + detail::av_error(err));
    if (p->stream_index == want && p->pts != AV_NOPTS_VALUE && p->duration > 0) {
      const AVRational tb = fmt->streams[want]->time_base;
      const std::int64_t start = av_rescale_q(p->pts, tb, kMicroseconds) - origin;
      const std::int64_t end = start + av_rescale_q(p->duration, tb, kMicroseconds);
      std::string text = cue_text(codec, {p->data, static_cast<std::size_t>(p->size)});
      if (start >= 0 && end > start && !text.empty())
        cues.push_back({static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(end), std::move(text)});
    }
    av_packet_unref(p.get());
  }
  std::stable_sort(cues.begin(), cues.end(), [](const Cue& a, const Cue& b) { return a.start_us < b.start_us; });
  return cues;
}

std::string webvtt_segment(const std::vector<Cue>& cues, std::uint64_t start_us, std::uint64_t end_us, std::uint64_t mpegts_at_zero) {
  std::string out = "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:" + std::to_string(mpegts_at_zero) + ",LOCAL:00:00:00.000\n";
  for (const Cue& c : cues)
    if (c.start_us < end_us && c.end_us > start_us)
      out += "\n" + timestamp(c.start_us) + " --> " + timestamp(c.end_us) + "\n" + c.text + "\n";
  return out;
}

std::string webvtt_file(const std::vector<Cue>& cues) {
  std::string out = "WEBVTT\n";
  for (const Cue& c : cues) out += "\n" + timestamp(c.start_us) + " --> " + timestamp(c.end_us) + "\n" + c.text + "\n";
  return out;
}

}  // namespace vod::media
