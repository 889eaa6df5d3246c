// SPDX-License-Identifier: LGPL-2.1-or-later
// The live record cutter: records of whole packets that begin at access units, a size limit,
// resynchronization after bytes that are not TS, any input chunking, and discontinuities.
#include <gtest/gtest.h>

#include "live/record_cutter.hpp"
#include "ts_packets.hpp"

namespace vod::server::live {
namespace {

using test::packet;
using test::pes;

struct Cut {
  std::vector<std::uint8_t> bytes;
  bool unit_start, random_access, discontinuity;
  std::optional<std::uint64_t> pts;
};

struct Harness {
  std::vector<Cut> cuts;
  RecordCutter cutter;
  explicit Harness(std::size_t max = 64 * 1024)
      : cutter(max, [this](const Record& r) {
          cuts.push_back({{r.bytes.begin(), r.bytes.end()}, r.unit_start, r.random_access, r.discontinuity, r.pts_90k});
        }) {}
  void feed(const test::Packet& p) { cutter.feed(p); }
};

// PAT, PMT, then `frames` video access units of `packets_each` packets; every `gop`th is a keyframe.
std::vector<std::uint8_t> stream(int frames, int packets_each, int gop) {
  std::vector<std::uint8_t> out;
  auto add = [&](const test::Packet& p) { out.insert(out.end(), p.begin(), p.end()); };
  add(test::pat());
  add(test::pmt(0x1b));
  for (int f = 0; f < frames; ++f) {
    const bool key = f % gop == 0;
    add(packet(0x100, true, pes(3600u * static_cast<unsigned>(f), {0, 0, 1, static_cast<std::uint8_t>(key ? 0x65 : 0x41)}), key));
    for (int i = 1; i < packets_each; ++i) add(packet(0x100, false, std::vector<std::uint8_t>(184, static_cast<std::uint8_t>(f))));
  }
  return out;
}

std::uint16_t pid_of(const std::vector<std::uint8_t>& b, std::size_t packet) {
  return static_cast<std::uint16_t>(((b[packet * 188 + 1] & 0x1f) << 8) | b[packet * 188 + 2]);
}

// The packets of `pid` in all records, in order.
std::vector<std::vector<std::uint8_t>> packets_of(const std::vector<Cut>& cuts, std::uint16_t pid) {
  std::vector<std::vector<std::uint8_t>> out;
  for (const auto& c : cuts)
    for (std::size_t i = 0; i < c.bytes.size() / 188; ++i)
      if (pid_of(c.bytes, i) == pid)
        out.emplace_back(c.bytes.begin() + static_cast<std::ptrdiff_t>(i * 188),
                         c.bytes.begin() + static_cast<std::ptrdiff_t>((i + 1) * 188));
  return out;
}

TEST(RecordCutter, ARecordPerAccessUnitAndKeyframesCarryTheirPatAndPmt) {
  Harness h;
  h.cutter.feed(stream(6, 3, 3));
  h.cutter.flush();
  // PAT and PMT come before any access unit: a record of their own. Then one per frame.
  ASSERT_EQ(h.cuts.size(), 7u);
  EXPECT_EQ(h.cuts[0].bytes.size(), 2 * 188u);
  EXPECT_FALSE(h.cuts[0].unit_start);
  for (std::size_t i = 1; i < h.cuts.size(); ++i) {
    const bool key = (i - 1) % 3 == 0;
    EXPECT_TRUE(h.cuts[i].unit_start) << i;
    EXPECT_EQ(h.cuts[i].random_access, key) << i;
    ASSERT_TRUE(h.cuts[i].pts) << i;
    EXPECT_EQ(*h.cuts[i].pts, 3600u * (i - 1));
    // A keyframe record decodes on its own: PAT and PMT first, then the frame.
    ASSERT_EQ(h.cuts[i].bytes.size(), (key ? 5 : 3) * 188u) << i;
    if (key) {
      EXPECT_EQ(pid_of(h.cuts[i].bytes, 0), 0u);
      EXPECT_EQ(pid_of(h.cuts[i].bytes, 1), 0x20u);
      EXPECT_EQ(pid_of(h.cuts[i].bytes, 2), 0x100u);
    }
  }
  EXPECT_EQ(h.cutter.stats().packets, 2u + 6 * 3);
  // The repeated PAT and PMT keep their PIDs' continuity counters running.
  for (std::uint16_t pid : {std::uint16_t{0}, std::uint16_t{0x20}}) {
    const auto psi = packets_of(h.cuts, pid);
    ASSERT_EQ(psi.size(), 3u) << pid;  // the original and two repeats
    for (std::size_t i = 0; i < psi.size(); ++i) EXPECT_EQ(psi[i][3] & 0x0f, static_cast<int>(i)) << pid;
  }
}

TEST(RecordCutter, AnyChunkingOfTheInputGivesTheSameRecords) {
  const auto bytes = stream(8, 5, 4);
  Harness whole, bytewise, odd;
  whole.cutter.feed(bytes);
  for (std::uint8_t b : bytes) bytewise.cutter.feed(std::span<const std::uint8_t>(&b, 1));
  for (std::size_t at = 0; at < bytes.size(); at += 333)
    odd.cutter.feed(std::span<const std::uint8_t>(bytes).subspan(at, std::min<std::size_t>(333, bytes.size() - at)));
  for (Harness* h : {&whole, &bytewise, &odd}) h->cutter.flush();
  ASSERT_EQ(bytewise.cuts.size(), whole.cuts.size());
  ASSERT_EQ(odd.cuts.size(), whole.cuts.size());
  for (std::size_t i = 0; i < whole.cuts.size(); ++i) {
    EXPECT_EQ(bytewise.cuts[i].bytes, whole.cuts[i].bytes) << i;
    EXPECT_EQ(odd.cuts[i].bytes, whole.cuts[i].bytes) << i;
  }
}

TEST(RecordCutter, LargeAccessUnitsAreSplitAtTheSizeLimitOnPacketBoundaries) {
  Harness h(10 * 188 + 50);  // rounded down to 10 packets
  h.cutter.feed(stream(1, 25, 1));
  h.cutter.flush();
  ASSERT_EQ(h.cuts.size(), 4u);  // PAT+PMT, then the 25-packet frame as (PAT, PMT, 8) + 10 + 7
  EXPECT_EQ(h.cuts[1].bytes.size(), 10 * 188u);
  EXPECT_TRUE(h.cuts[1].random_access);
  EXPECT_EQ(h.cuts[2].bytes.size(), 10 * 188u);
  EXPECT_FALSE(h.cuts[2].unit_start);
  EXPECT_EQ(h.cuts[3].bytes.size(), 7 * 188u);
}

TEST(RecordCutter, BytesThatAreNotTsAreDroppedAndSyncIsFoundAgain) {
  Harness h;
  // Sync bytes every 11 bytes, so never 188 apart (188 = 17 * 11 + 1), not where a packet would
  // follow the good stream, and not 188 bytes before a real packet.
  std::vector<std::uint8_t> garbage(1000, 0x00);
  for (std::size_t i = 5; i < garbage.size(); i += 11) garbage[i] = 0x47;
  const auto good = stream(3, 2, 1);
  std::vector<std::uint8_t> input = garbage;  // garbage, good, garbage, good
  input.insert(input.end(), good.begin(), good.end());
  input.insert(input.end(), garbage.begin(), garbage.end());
  input.insert(input.end(), good.begin(), good.end());
  h.cutter.feed(input);
  h.cutter.flush();
  EXPECT_EQ(h.cutter.stats().dropped_bytes, 2000u);
  EXPECT_EQ(h.cutter.stats().resyncs, 1u);  // lost once (at the start it was never in sync)
  // Every video packet of both good parts, whole and in order, and nothing of the garbage.
  std::vector<std::vector<std::uint8_t>> expected;
  for (int part = 0; part < 2; ++part)
    for (std::size_t i = 2; i < good.size() / 188; ++i)
      expected.emplace_back(good.begin() + static_cast<std::ptrdiff_t>(i * 188), good.begin() + static_cast<std::ptrdiff_t>((i + 1) * 188));
  EXPECT_EQ(packets_of(h.cuts, 0x100), expected);
  std::size_t total = 0;
  for (const auto& c : h.cuts) total += c.bytes.size() / 188;
  EXPECT_EQ(total, packets_of(h.cuts, 0x100).size() + packets_of(h.cuts, 0).size() + packets_of(h.cuts, 0x20).size());
}

TEST(RecordCutter, ADiscontinuityFlagsTheNextRecordAndDropsAHalfPacket) {
  Harness h;
  const auto bytes = stream(2, 2, 1);
  h.cutter.feed(std::span<const std::uint8_t>(bytes).first(bytes.size() - 100));  // the last packet is cut short
  h.cutter.mark_discontinuity();
  EXPECT_EQ(h.cutter.stats().dropped_bytes, 88u);
  h.cutter.feed(bytes);
  h.cutter.flush();
  std::size_t flagged = 0;
  for (const auto& c : h.cuts) flagged += c.discontinuity;
  EXPECT_EQ(flagged, 1u);
  auto first_after = std::find_if(h.cuts.begin(), h.cuts.end(), [](const Cut& c) { return c.discontinuity; });
  ASSERT_NE(first_after, h.cuts.end());
  EXPECT_EQ(first_after->bytes.size(), 2 * 188u);  // the new stream's PAT + PMT
  EXPECT_EQ(pid_of(first_after->bytes, 0), 0u);
}

}  // namespace
}  // namespace vod::server::live
