// SPDX-License-Identifier: LGPL-2.1-or-later
// The MPEG-TS packet scanner on hand-built packets: header fields, PCR, PTS, PAT/PMT, and keyframes
// from the random access indicator or from the NAL units of the first packet of a PES.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "ts_packets.hpp"
#include "vod/media/ts_scanner.hpp"

namespace vod::media {
namespace {

using test::packet;
using test::Packet;
using test::pat;
using test::pes;
using test::pmt;
using test::section;

TsPacketMeaning scan(TsScanner& s, const Packet& p) {
  auto parsed = parse_ts_packet(p);
  EXPECT_TRUE(parsed.has_value());
  return s.scan(*parsed);
}

TEST(TsPacket, HeaderAdaptationFieldAndPcr) {
  const Packet p = packet(0x1abc, true, {1, 2, 3}, true, 1234567890123ull, 7);
  auto parsed = parse_ts_packet(p);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->pid, 0x1abc);
  EXPECT_TRUE(parsed->payload_unit_start);
  EXPECT_TRUE(parsed->random_access);
  EXPECT_EQ(parsed->continuity_counter, 7);
  ASSERT_TRUE(parsed->pcr);
  EXPECT_EQ(*parsed->pcr, 1234567890123ull);
  ASSERT_EQ(parsed->payload.size(), 3u);
  EXPECT_EQ(parsed->payload[2], 3);
}

TEST(TsPacket, RefusesABadSyncByteAShortBufferAndAnOverlongAdaptationField) {
  Packet p = packet(0x100, false, {});
  p[0] = 0x48;
  EXPECT_FALSE(parse_ts_packet(p));
  EXPECT_FALSE(parse_ts_packet(std::span<const std::uint8_t>(packet(0x100, false, {}).data(), 187)));
  Packet q = packet(0x100, false, {});
  q[3] = 0x30;
  q[4] = 184;  // more than the 183 bytes after it
  EXPECT_FALSE(parse_ts_packet(q));
  q[4] = 183;  // exactly the rest of the packet: no payload
  auto ok = parse_ts_packet(q);
  ASSERT_TRUE(ok);
  EXPECT_TRUE(ok->payload.empty());
}

TEST(TsScanner, LearnsTheProgramAndMarksKeyframesByRandomAccessIndicator) {
  TsScanner s;
  EXPECT_FALSE(scan(s, pat()).access_unit_start);
  scan(s, pmt(0x1b));
  EXPECT_EQ(s.main_pid(), 0x100);
  EXPECT_EQ(s.pcr_pid(), 0x100);
  EXPECT_EQ(s.video_codec(), VideoCodec::h264);
  const auto key = scan(s, packet(0x100, true, pes(900000, {0, 0, 0, 1, 0x09, 0xf0}), true, 27'000'000));
  EXPECT_TRUE(key.access_unit_start);
  EXPECT_TRUE(key.random_access);
  EXPECT_EQ(key.pts_90k, 900000u);
  EXPECT_EQ(key.pcr_27m, 27'000'000u);
  const auto delta = scan(s, packet(0x100, true, pes(903600, {0, 0, 0, 1, 0x09, 0xf0, 0, 0, 1, 0x41})));
  EXPECT_TRUE(delta.access_unit_start);
  EXPECT_FALSE(delta.random_access);
  EXPECT_FALSE(scan(s, packet(0x100, false, {0, 0, 1, 0x65})).access_unit_start);           // continuation, not a start
  EXPECT_FALSE(scan(s, packet(0x101, true, pes(900000, {0xff, 0xf1}))).access_unit_start);  // audio beside video
}

TEST(TsScanner, FindsKeyframesFromNalUnitsWhenTheEncoderSetsNoIndicator) {
  TsScanner h264;
  scan(h264, pat());
  scan(h264, pmt(0x1b));
  EXPECT_TRUE(scan(h264, packet(0x100, true, pes(0, {0, 0, 0, 1, 0x09, 0xf0, 0, 0, 0, 1, 0x67, 0x64}))).random_access);  // SPS
  EXPECT_TRUE(scan(h264, packet(0x100, true, pes(0, {0, 0, 1, 0x65, 0x88}))).random_access);                             // IDR
  EXPECT_FALSE(scan(h264, packet(0x100, true, pes(0, {0, 0, 1, 0x41, 0x9a}))).random_access);                            // P slice

  TsScanner hevc;
  scan(hevc, pat());
  scan(hevc, pmt(0x24));
  EXPECT_EQ(hevc.video_codec(), VideoCodec::hevc);
  EXPECT_TRUE(scan(hevc, packet(0x100, true, pes(0, {0, 0, 1, 0x40, 0x01}))).random_access);   // VPS (type 32)
  EXPECT_TRUE(scan(hevc, packet(0x100, true, pes(0, {0, 0, 1, 0x26, 0x01}))).random_access);   // IDR_W_RADL (19)
  EXPECT_FALSE(scan(hevc, packet(0x100, true, pes(0, {0, 0, 1, 0x02, 0x01}))).random_access);  // TRAIL_R (1)

  TsScanner mpeg2;
  scan(mpeg2, pat());
  scan(mpeg2, pmt(0x02));
  EXPECT_TRUE(scan(mpeg2, packet(0x100, true, pes(0, {0, 0, 1, 0xb3, 0x2d}))).random_access);   // sequence header
  EXPECT_FALSE(scan(mpeg2, packet(0x100, true, pes(0, {0, 0, 1, 0x00, 0x00}))).random_access);  // picture
}

TEST(TsScanner, WithoutVideoEveryAudioFrameIsARandomAccessPoint) {
  TsScanner s;
  scan(s, pat());
  scan(s, pmt(0));
  EXPECT_EQ(s.main_pid(), 0x101);
  EXPECT_EQ(s.video_codec(), VideoCodec::none);
  const auto m = scan(s, packet(0x101, true, pes(1800, {0xff, 0xf1})));
  EXPECT_TRUE(m.access_unit_start);
  EXPECT_TRUE(m.random_access);
}

TEST(TsScanner, TruncatedSectionsAndHeadersAreIgnoredNotTrusted) {
  TsScanner s;
  auto overlong = section(0x00, {0x00, 0x01, 0xe0, 0x20});
  overlong[2] = 0xbf;  // the section claims 0xfxx bytes, more than the packet holds
  scan(s, packet(0, true, overlong));
  scan(s, pmt(0x1b));
  EXPECT_FALSE(s.have_program());
  EXPECT_FALSE(pes_pts(std::vector<std::uint8_t>{0, 0, 1, 0xe0, 0, 0, 0x80, 0x80}));                    // cut inside the header
  EXPECT_FALSE(pes_pts(std::vector<std::uint8_t>{0, 0, 1, 0xe0, 0, 0, 0x80, 0x00, 0, 0, 0, 0, 0, 0}));  // no PTS flag
}

}  // namespace
}  // namespace vod::media
