// SPDX-License-Identifier: LGPL-2.1-or-later
// Hand-built MPEG-TS packets for the unit tests of the scanner and the live record cutter.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "vod/media/ts_scanner.hpp"

namespace vod::test {

using media::kTsPacketSize;
using media::kTsSyncByte;

using Packet = std::array<std::uint8_t, kTsPacketSize>;

// A packet with `payload` (padded with 0xff stuffing in an adaptation field when shorter).
inline Packet packet(std::uint16_t pid, bool start, std::vector<std::uint8_t> payload, bool rai = false,
                     std::optional<std::uint64_t> pcr = std::nullopt, std::uint8_t cc = 0) {
  Packet p{};
  p.fill(0xff);
  p[0] = kTsSyncByte;
  p[1] = static_cast<std::uint8_t>((start ? 0x40 : 0) | (pid >> 8));
  p[2] = static_cast<std::uint8_t>(pid & 0xff);
  std::vector<std::uint8_t> af;
  if (rai || pcr) {
    af.push_back(static_cast<std::uint8_t>((rai ? 0x40 : 0) | (pcr ? 0x10 : 0)));
    if (pcr) {
      const std::uint64_t base = *pcr / 300, ext = *pcr % 300;
      af.push_back(static_cast<std::uint8_t>(base >> 25));
      af.push_back(static_cast<std::uint8_t>(base >> 17));
      af.push_back(static_cast<std::uint8_t>(base >> 9));
      af.push_back(static_cast<std::uint8_t>(base >> 1));
      af.push_back(static_cast<std::uint8_t>(((base & 1) << 7) | 0x7e | (ext >> 8)));
      af.push_back(static_cast<std::uint8_t>(ext & 0xff));
    }
  }
  const std::size_t room = kTsPacketSize - 4;
  if (!af.empty() || payload.size() < room) {
    const std::size_t af_len = room - 1 - payload.size();  // stuffing fills the rest
    p[3] = static_cast<std::uint8_t>(0x30 | cc);
    p[4] = static_cast<std::uint8_t>(af_len);
    if (af_len > 0) p[5] = af.empty() ? 0 : af[0];
    for (std::size_t i = 1; i < af.size(); ++i) p[5 + i] = af[i];
    std::copy(payload.begin(), payload.end(), p.begin() + 5 + static_cast<std::ptrdiff_t>(af_len));
  } else {
    p[3] = static_cast<std::uint8_t>(0x10 | cc);
    std::copy(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(room), p.begin() + 4);
  }
  return p;
}

inline std::vector<std::uint8_t> section(std::uint8_t table_id, std::vector<std::uint8_t> body) {
  // pointer_field, table_id, section_length (body + 5 header bytes + 4 CRC), 5 header bytes, body, CRC
  std::vector<std::uint8_t> s{0, table_id, 0, 0, 0, 1, 0xc1, 0, 0};
  s.insert(s.end(), body.begin(), body.end());
  const std::size_t length = 5 + body.size() + 4;
  s[2] = static_cast<std::uint8_t>(0xb0 | (length >> 8));
  s[3] = static_cast<std::uint8_t>(length & 0xff);
  s.insert(s.end(), {0xde, 0xad, 0xbe, 0xef});  // the scanner does not check the CRC
  return s;
}

inline Packet pat() { return packet(0, true, section(0x00, {0x00, 0x01, 0xe0, 0x20})); }  // program 1 -> PMT on PID 0x20

// PMT on PID 0x20: PCR on 0x100; streams: `video_type` on 0x100 (when not 0), AAC on 0x101.
inline Packet pmt(std::uint8_t video_type) {
  std::vector<std::uint8_t> body{0xe1, 0x00, 0xf0, 0x00};  // PCR PID 0x100, no program info
  if (video_type) body.insert(body.end(), {video_type, 0xe1, 0x00, 0xf0, 0x00});
  body.insert(body.end(), {0x0f, 0xe1, 0x01, 0xf0, 0x00});
  return packet(0x20, true, section(0x02, body));
}

// A PES header with a PTS, followed by `es` bytes.
inline std::vector<std::uint8_t> pes(std::uint64_t pts, std::vector<std::uint8_t> es) {
  std::vector<std::uint8_t> p{0,
                              0,
                              1,
                              0xe0,
                              0,
                              0,
                              0x80,
                              0x80,
                              5,
                              static_cast<std::uint8_t>(0x21 | ((pts >> 29) & 0x0e)),
                              static_cast<std::uint8_t>(pts >> 22),
                              static_cast<std::uint8_t>(0x01 | ((pts >> 14) & 0xfe)),
                              static_cast<std::uint8_t>(pts >> 7),
                              static_cast<std::uint8_t>(0x01 | ((pts << 1) & 0xfe))};
  p.insert(p.end(), es.begin(), es.end());
  return p;
}

}  // namespace vod::test
