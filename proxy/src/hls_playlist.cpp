// SPDX-License-Identifier: LGPL-2.1-or-later
#include "hls_playlist.hpp"

#include <ctime>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace vod::proxy::hls {

namespace {

std::string seconds_text(std::uint64_t us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(us) / 1e6);
  return buf;
}

unsigned rounded_seconds(std::uint64_t us) { return static_cast<unsigned>((us + 500'000) / 1'000'000); }

}  // namespace

unsigned target_duration(const std::vector<Segment>& segments) {
  unsigned t = 1;
  for (const auto& s : segments) t = std::max(t, rounded_seconds(s.extinf_us()));
  return t;
}

std::optional<ByteSpan> ts_init_range(std::span<const std::uint8_t> head) {
  constexpr std::size_t kPacket = 188;
  constexpr unsigned kNullPid = 0x1fff, kLastTablePid = 0x1f;
  std::optional<unsigned> pmt_pid;
  std::size_t pmt_left = 0;  // bytes of a PMT section still to come in later packets
  for (std::size_t off = 0; off + kPacket <= head.size(); off += kPacket) {
    const auto p = head.subspan(off, kPacket);
    if (p[0] != 0x47) return std::nullopt;
    const unsigned pid = ((p[1] & 0x1fu) << 8) | p[2];
    const bool unit_start = p[1] & 0x40;
    const unsigned control = (p[3] >> 4) & 3u;  // 1 payload, 2 adaptation only, 3 both
    std::size_t at = 4;
    if (control == 2 || control == 3) at += 1 + p[4];
    const bool payload = (control == 1 || control == 3) && at < kPacket;
    if (pid == kNullPid) continue;
    if (pmt_pid && pid == *pmt_pid) {
      if (!payload) continue;
      std::size_t have = kPacket - at;
      if (pmt_left == 0) {
        if (!unit_start) continue;                                   // the end of a section that began before the PAT: not ours
        at += 1 + p[at];                                             // pointer_field
        if (at + 3 > kPacket || p[at] != 0x02) return std::nullopt;  // table_id 2: a PMT section
        pmt_left = 3 + (((p[at + 1] & 0x0fu) << 8) | p[at + 2]);
        have = kPacket - at;
      }
      if (pmt_left <= have) return ByteSpan{0, off + kPacket};
      pmt_left -= have;
      continue;
    }
    if (pid == 0 && !pmt_pid) {
      if (!payload || !unit_start) return std::nullopt;
      at += 1 + p[at];
      if (at + 8 > kPacket || p[at] != 0x00) return std::nullopt;  // table_id 0: a PAT section
      const std::size_t section_end = std::min<std::size_t>(kPacket, at + 3 + (((p[at + 1] & 0x0fu) << 8) | p[at + 2]));
      // Programs from byte 8 of the section up to its CRC: the first that is not the NIT's (number 0).
      const std::size_t programs_end = section_end >= at + 12 ? section_end - 4 : at + 8;
      for (std::size_t q = at + 8; q + 4 <= programs_end; q += 4) {
        const unsigned number = (static_cast<unsigned>(p[q]) << 8) | p[q + 1];
        if (number == 0) continue;
        pmt_pid = ((p[q + 2] & 0x1fu) << 8) | p[q + 3];
        break;
      }
      if (!pmt_pid || *pmt_pid <= kLastTablePid || *pmt_pid == kNullPid) return std::nullopt;
      continue;
    }
    if (pid <= kLastTablePid) continue;  // another table (SDT, NIT, EIT...): no media
    return std::nullopt;                 // media (or the unknown) before the tables were whole
  }
  return std::nullopt;
}

std::string ts_media_playlist(const std::vector<Segment>& segments, const std::string& movie_uri, const std::optional<ByteSpan>& init) {
  // Version 4 for EXT-X-BYTERANGE; 6 for EXT-X-MAP in a playlist that is not I-frames only (RFC 8216, 7).
  std::string b = "#EXTM3U\n#EXT-X-VERSION:" + std::string(init ? "6" : "4") +
                  "\n#EXT-X-TARGETDURATION:" + std::to_string(target_duration(segments)) +
                  "\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-INDEPENDENT-SEGMENTS\n";
  if (init)
    b += "#EXT-X-MAP:URI=\"" + movie_uri + "\",BYTERANGE=\"" + std::to_string(init->length) + "@" + std::to_string(init->offset) + "\"\n";
  for (const auto& s : segments)
    b += "#EXTINF:" + seconds_text(s.extinf_us()) + ",\n#EXT-X-BYTERANGE:" + std::to_string(s.bytes.length) + "@" +
         std::to_string(s.bytes.offset) + "\n" + movie_uri + "\n";
  return b + "#EXT-X-ENDLIST\n";
}

namespace {
std::string utc_ms(std::uint64_t us) {
  const std::time_t t = static_cast<std::time_t>(us / 1'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[40];
  const std::size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(text + n, sizeof text - n, ".%03uZ", static_cast<unsigned>(us / 1000 % 1000));
  return text;
}
}  // namespace

std::string dvr_playlist(const proto::WindowIndex& w, const std::string& uri, unsigned min_target_s, bool skip) {
  const std::uint64_t s = w.header.segment_size;
  const std::uint64_t whole_end = s ? w.header.end_offset / s * s : 0;  // the chunk being written is not read from the window
  struct Entry {
    const proto::WindowMark* mark;
    std::uint64_t length, duration_us;
  };
  std::vector<Entry> entries;
  for (std::size_t i = 0; i + 1 < w.marks.size(); ++i) {
    const auto& m = w.marks[i];
    const auto& next = w.marks[i + 1];
    if (next.offset > whole_end) break;
    if (i == 0 && !(m.flags & proto::kWindowMarkKeyframe)) continue;  // a playlist starts at a keyframe
    entries.push_back(
        {&m, next.offset - m.offset, next.publish_time_us > m.publish_time_us ? next.publish_time_us - m.publish_time_us : 1});
  }
  unsigned target = std::max(1u, min_target_s);
  for (const auto& e : entries) target = std::max(target, rounded_seconds(e.duration_us));
  const std::uint64_t skip_until_us = 6ull * target * 1'000'000;
  std::size_t skipped = 0;
  if (skip && !entries.empty()) {
    std::uint64_t from_end = 0;
    std::size_t keep = entries.size();
    while (keep > 0 && from_end + entries[keep - 1].duration_us <= skip_until_us) from_end += entries[--keep].duration_us;
    skipped = keep;
  }
  std::string b = "#EXTM3U\n#EXT-X-VERSION:" + std::string(skipped ? "9" : "6") + "\n#EXT-X-TARGETDURATION:" + std::to_string(target) +
                  "\n#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=" + std::to_string(6 * target) + ".0\n#EXT-X-MEDIA-SEQUENCE:" +
                  std::to_string(entries.empty() ? w.header.keyframes_next : entries.front().mark->number - 1) +
                  "\n#EXT-X-DISCONTINUITY-SEQUENCE:" +
                  std::to_string(entries.empty() || entries.front().mark->stream_id == 0 ? 0 : entries.front().mark->stream_id - 1) +
                  "\n#EXT-X-INDEPENDENT-SEGMENTS\n";
  if (skipped) b += "#EXT-X-SKIP:SKIPPED-SEGMENTS=" + std::to_string(skipped) + "\n";
  for (std::size_t i = skipped; i < entries.size(); ++i) {
    const auto& e = entries[i];
    if (i > 0 && e.mark->stream_id != entries[i - 1].mark->stream_id) b += "#EXT-X-DISCONTINUITY\n";
    b += "#EXT-X-PROGRAM-DATE-TIME:" + utc_ms(e.mark->publish_time_us) + "\n#EXTINF:" + seconds_text(e.duration_us) +
         ",\n#EXT-X-BYTERANGE:" + std::to_string(e.length) + "@" + std::to_string(e.mark->offset) + "\n" + uri + "\n";
  }
  return b;
}

std::string fmp4_media_playlist(const std::vector<Segment>& segments) {
  std::string b = "#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:" + std::to_string(target_duration(segments)) +
                  "\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-MAP:URI=\"init.mp4\"\n";
  for (std::size_t i = 0; i < segments.size(); ++i)
    b += "#EXTINF:" + seconds_text(segments[i].extinf_us()) + ",\nseg-" + std::to_string(i) + ".m4s\n";
  return b + "#EXT-X-ENDLIST\n";
}

std::string iframe_playlist(const std::vector<std::uint64_t>& k, std::uint64_t duration_us) {
  std::vector<Segment> entries;  // for the target duration
  for (std::size_t i = 0; i < k.size(); ++i) {
    const std::uint64_t end = i + 1 < k.size() ? k[i + 1] : std::max(duration_us, k[i] + 1);
    entries.push_back({{0, 0}, k[i], end > k[i] ? end - k[i] : 1, 0});
  }
  std::string b = "#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:" + std::to_string(target_duration(entries)) +
                  "\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-I-FRAMES-ONLY\n#EXT-X-MAP:URI=\"init.mp4\"\n";
  for (std::size_t i = 0; i < entries.size(); ++i)
    b += "#EXTINF:" + seconds_text(entries[i].duration_us) + ",\niframe-" + std::to_string(i) + ".m4s\n";
  return b + "#EXT-X-ENDLIST\n";
}

std::string webvtt_media_playlist(const std::vector<Segment>& segments) {
  std::string b = "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:" + std::to_string(target_duration(segments)) +
                  "\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n";
  for (std::size_t i = 0; i < segments.size(); ++i)
    b += "#EXTINF:" + seconds_text(segments[i].extinf_us()) + ",\nseg-" + std::to_string(i) + ".vtt\n";
  return b + "#EXT-X-ENDLIST\n";
}

std::uint64_t peak_bandwidth(const std::vector<Segment>& segments, std::uint64_t fallback) {
  std::uint64_t peak = 0;
  for (const auto& s : segments)
    if (s.duration_us) {
      const double bps = std::ceil(static_cast<double>(s.bytes.length) * 8e6 / static_cast<double>(s.duration_us));
      peak = std::max(peak, static_cast<std::uint64_t>(std::min(bps, 1e15)));
    }
  return peak ? peak : fallback;
}

std::string multivariant_playlist(const Variant& v) { return multivariant_playlist(std::vector<Variant>{v}); }

std::string multivariant_playlist(const std::vector<Variant>& variants, const std::vector<MediaRendition>& media) {
  std::string b = "#EXTM3U\n#EXT-X-INDEPENDENT-SEGMENTS\n";
  for (const MediaRendition& a : media) {
    b += "#EXT-X-MEDIA:TYPE=" + a.type + ",GROUP-ID=\"" + a.group + "\",NAME=\"" + a.name + "\"";
    if (!a.language.empty()) b += ",LANGUAGE=\"" + a.language + "\"";
    b += std::string(",DEFAULT=") + (a.is_default ? "YES" : "NO") + ",AUTOSELECT=YES";
    if (a.channels) b += ",CHANNELS=\"" + std::to_string(a.channels) + "\"";
    b += ",URI=\"" + a.uri + "\"\n";
  }
  for (const Variant& v : variants) {
    if (v.iframe_uri.empty()) continue;
    // The keyframes alone: a tenth of the variant's rate, an estimate (their sizes are not in the index).
    b += "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=" + std::to_string(std::max<std::uint64_t>(v.bandwidth / 10, 1));
    if (!v.codecs.empty()) b += ",CODECS=\"" + v.codecs.substr(0, v.codecs.find(',')) + "\"";
    if (v.width && v.height) b += ",RESOLUTION=" + std::to_string(v.width) + "x" + std::to_string(v.height);
    b += ",URI=\"" + v.iframe_uri + "\"\n";
  }
  for (const Variant& v : variants) {
    b += "#EXT-X-STREAM-INF:BANDWIDTH=" + std::to_string(std::max<std::uint64_t>(v.bandwidth, 1));
    if (v.average_bandwidth) b += ",AVERAGE-BANDWIDTH=" + std::to_string(v.average_bandwidth);
    if (!v.codecs.empty()) b += ",CODECS=\"" + v.codecs + "\"";
    if (v.width && v.height) b += ",RESOLUTION=" + std::to_string(v.width) + "x" + std::to_string(v.height);
    if (v.frame_rate_num && v.frame_rate_den) {
      char rate[32];  // a decimal-floating-point of three decimals (RFC 8216, 4.3.4.2)
      std::snprintf(rate, sizeof rate, "%.3f", static_cast<double>(v.frame_rate_num) / v.frame_rate_den);
      b += std::string(",FRAME-RATE=") + rate;
    }
    if (!v.audio_group.empty()) b += ",AUDIO=\"" + v.audio_group + "\"";
    if (!v.subtitles_group.empty()) b += ",SUBTITLES=\"" + v.subtitles_group + "\"";
    b += "\n" + v.uri + "\n";
  }
  return b;
}

std::optional<std::string> avc_codec(unsigned profile_idc, unsigned constraint_flags, unsigned level_idc) {
  if (profile_idc == 0 || profile_idc > 255 || constraint_flags > 255 || level_idc == 0 || level_idc > 255) return std::nullopt;
  char buf[16];
  std::snprintf(buf, sizeof buf, "avc1.%02x%02x%02x", profile_idc, constraint_flags, level_idc);
  return buf;
}

std::optional<std::string> aac_codec(unsigned object_type) {
  if (object_type == 0 || object_type > 45) return std::nullopt;
  return "mp4a.40." + std::to_string(object_type);
}

}  // namespace vod::proxy::hls
