// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/media/ts_scanner.hpp"

namespace vod::media {

namespace {

std::uint16_t pid_at(std::span<const std::uint8_t> s, std::size_t i) { return static_cast<std::uint16_t>(((s[i] & 0x1f) << 8) | s[i + 1]); }

std::size_t length12(std::span<const std::uint8_t> s, std::size_t i) { return static_cast<std::size_t>(((s[i] & 0x0f) << 8) | s[i + 1]); }

// The section that starts in a payload unit (after its pointer_field), when it has `table_id` and
// fits this packet: PAT and PMT of ordinary streams do. Returns the section up to, not including,
// its CRC.
std::span<const std::uint8_t> section_in(std::span<const std::uint8_t> payload, std::uint8_t table_id) {
  if (payload.empty()) return {};
  const std::size_t start = 1 + std::size_t{payload[0]};
  if (start + 3 > payload.size() || payload[start] != table_id) return {};
  const std::size_t length = length12(payload, start + 1);
  if (length < 9 || start + 3 + length > payload.size()) return {};
  return payload.subspan(start, 3 + length - 4);
}

bool is_audio(std::uint8_t stream_type) {
  switch (stream_type) {
    case 0x03:
    case 0x04:
    case 0x0f:
    case 0x11:
    case 0x81:
    case 0x87: return true;
    default: return false;
  }
}

VideoCodec video_codec_of(std::uint8_t stream_type) {
  switch (stream_type) {
    case 0x01:
    case 0x02: return VideoCodec::mpeg2;
    case 0x1b: return VideoCodec::h264;
    case 0x24: return VideoCodec::hevc;
    case 0x10:
    case 0x42:
    case 0xea:
    case 0xd1: return VideoCodec::other;
    default: return VideoCodec::none;
  }
}

}  // namespace

std::optional<TsPacket> parse_ts_packet(std::span<const std::uint8_t> b) {
  if (b.size() < kTsPacketSize || b[0] != kTsSyncByte) return std::nullopt;
  b = b.first(kTsPacketSize);
  TsPacket p;
  p.transport_error = (b[1] & 0x80) != 0;
  p.payload_unit_start = (b[1] & 0x40) != 0;
  p.pid = pid_at(b, 1);
  p.continuity_counter = b[3] & 0x0f;
  const unsigned control = (b[3] >> 4) & 3;
  std::size_t at = 4;
  if (control & 2) {
    const std::size_t af = b[4];
    if (af > kTsPacketSize - 5) return std::nullopt;
    if (af > 0) {
      const std::uint8_t flags = b[5];
      p.discontinuity = (flags & 0x80) != 0;
      p.random_access = (flags & 0x40) != 0;
      if ((flags & 0x10) && af >= 7) {
        const std::uint64_t base = (std::uint64_t{b[6]} << 25) | (std::uint64_t{b[7]} << 17) | (std::uint64_t{b[8]} << 9) |
                                   (std::uint64_t{b[9]} << 1) | (b[10] >> 7);
        const std::uint64_t ext = (std::uint64_t{b[10] & 1u} << 8) | b[11];
        p.pcr = base * 300 + ext;
      }
    }
    at = 5 + af;
  }
  if ((control & 1) && at < kTsPacketSize) p.payload = b.subspan(at);
  return p;
}

std::optional<std::uint64_t> pes_pts(std::span<const std::uint8_t> s) {
  if (s.size() < 14 || s[0] != 0 || s[1] != 0 || s[2] != 1) return std::nullopt;
  if ((s[6] & 0xc0) != 0x80 || !(s[7] & 0x80)) return std::nullopt;  // no optional header, or no PTS
  return (std::uint64_t{(s[9] >> 1) & 7u} << 30) | (std::uint64_t{s[10]} << 22) | (std::uint64_t(s[11] >> 1) << 15) |
         (std::uint64_t{s[12]} << 7) | (s[13] >> 1);
}

void TsScanner::parse_pat(std::span<const std::uint8_t> payload) {
  const auto s = section_in(payload, 0x00);
  for (std::size_t i = 8; i + 4 <= s.size(); i += 4) {
    const unsigned program = (s[i] << 8) | s[i + 1];
    if (program == 0) continue;  // the network PID
    const std::uint16_t pid = pid_at(s, i + 2);
    if (pid != pmt_pid_) {
      pmt_pid_ = pid;
      main_pid_ = pcr_pid_ = kNoPid;
      codec_ = VideoCodec::none;
    }
    return;
  }
}

void TsScanner::parse_pmt(std::span<const std::uint8_t> payload) {
  const auto s = section_in(payload, 0x02);
  if (s.size() < 12) return;
  const std::uint16_t pcr = pid_at(s, 8);
  std::size_t i = 12 + length12(s, 10);
  std::uint16_t video = kNoPid, audio = kNoPid;
  VideoCodec codec = VideoCodec::none;
  for (; i + 5 <= s.size(); i += 5 + length12(s, i + 3)) {
    const std::uint8_t type = s[i];
    const std::uint16_t pid = pid_at(s, i + 1);
    if (video == kNoPid && video_codec_of(type) != VideoCodec::none) {
      video = pid;
      codec = video_codec_of(type);
    } else if (audio == kNoPid && is_audio(type)) {
      audio = pid;
    }
  }
  pcr_pid_ = pcr;
  main_pid_ = video != kNoPid ? video : audio;
  codec_ = codec;
}

bool TsScanner::keyframe_in(std::span<const std::uint8_t> pes) const {
  if (pes.size() < 9 || pes[0] != 0 || pes[1] != 0 || pes[2] != 1) return false;
  const std::size_t start = 9 + std::size_t{pes[8]};
  for (std::size_t i = start; i + 3 < pes.size(); ++i) {
    if (pes[i] != 0 || pes[i + 1] != 0 || pes[i + 2] != 1) continue;
    const std::uint8_t b = pes[i + 3];
    switch (codec_) {
      case VideoCodec::h264: {
        const unsigned type = b & 0x1f;
        if (type == 5 || type == 7) return true;  // IDR slice, or SPS before one
        break;
      }
      case VideoCodec::hevc: {
        const unsigned type = (b >> 1) & 0x3f;
        if ((type >= 16 && type <= 21) || type == 32) return true;  // IRAP slice, or VPS before one
        break;
      }
      case VideoCodec::mpeg2:
        if (b == 0xb3 || b == 0xb8) return true;  // sequence header, GOP header
        break;
      default: return false;
    }
  }
  return false;
}

TsPacketMeaning TsScanner::scan(const TsPacket& p) {
  TsPacketMeaning m;
  m.discontinuity = p.discontinuity;
  if (p.transport_error) return m;
  if (p.payload_unit_start) {
    if (p.pid == 0) parse_pat(p.payload);
    else if (p.pid == pmt_pid_) parse_pmt(p.payload);
  }
  if (p.pid == pcr_pid_ && p.pcr) m.pcr_27m = p.pcr;
  if (p.pid == main_pid_ && p.payload_unit_start) {
    m.access_unit_start = true;
    m.pts_90k = pes_pts(p.payload);
    m.random_access = codec_ == VideoCodec::none || p.random_access || keyframe_in(p.payload);
  }
  return m;
}

}  // namespace vod::media
