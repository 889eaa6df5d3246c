// SPDX-License-Identifier: LGPL-2.1-or-later
// TsSplicer (client/ts_splice.hpp): continuity counters across a splice of two files, as tables of
// (PID, payload or not, counter in the file) and the counter written.
#include <gtest/gtest.h>

#include <vector>

#include "vod/client/ts_splice.hpp"

namespace vod::client {
namespace {

struct P {
  unsigned pid;
  bool payload;
  unsigned cc;
};

std::vector<std::uint8_t> packets(const std::vector<P>& ps) {
  std::vector<std::uint8_t> out;
  for (const P& p : ps) {
    std::vector<std::uint8_t> b(kTsPacket, 0xff);
    b[0] = 0x47;
    b[1] = static_cast<std::uint8_t>(p.pid >> 8);
    b[2] = static_cast<std::uint8_t>(p.pid & 0xff);
    b[3] = static_cast<std::uint8_t>((p.payload ? 0x10 : 0x20) | p.cc);
    out.insert(out.end(), b.begin(), b.end());
  }
  return out;
}

std::vector<unsigned> counters(const std::vector<std::uint8_t>& bytes) {
  std::vector<unsigned> out;
  for (std::size_t at = 0; at + kTsPacket <= bytes.size(); at += kTsPacket) out.push_back(bytes[at + 3] & 0x0f);
  return out;
}

TEST(TsSplice, ACountersOfTheFirstFileAreKept) {
  TsSplicer s;
  auto a = packets({{0x100, true, 7}, {0x100, true, 8}, {0x101, true, 3}, {0x100, false, 8}, {0x100, true, 9}});
  s.rewrite(a);
  EXPECT_EQ(counters(a), (std::vector<unsigned>{7, 8, 3, 8, 9}));
}

TEST(TsSplice, EachPidFollowsOnAcrossASplice) {
  TsSplicer s;
  auto a = packets({{0x100, true, 14}, {0x100, true, 15}, {0x101, true, 4}});
  s.rewrite(a);
  s.splice();
  // The second file's counters start elsewhere: each PID carries on from its last (15 -> 0, 4 -> 5).
  auto b = packets({{0x100, true, 2}, {0x101, true, 9}, {0x100, true, 3}, {0x100, true, 3}, {0x100, true, 5}, {0x102, true, 6}});
  s.rewrite(b);
  // A duplicate (3, 3) and a gap (3 -> 5) of the file stay so; a PID new after the splice keeps its own.
  EXPECT_EQ(counters(b), (std::vector<unsigned>{0, 5, 1, 1, 3, 6}));
}

TEST(TsSplice, APacketWithoutPayloadFirstAfterASpliceRepeatsTheLastCounter) {
  TsSplicer s;
  auto a = packets({{0x100, true, 9}});
  s.rewrite(a);
  s.splice();
  auto b = packets({{0x100, false, 4}, {0x100, true, 5}});
  s.rewrite(b);
  EXPECT_EQ(counters(b), (std::vector<unsigned>{9, 10}));
}

TEST(TsSplice, NullPacketsAndBytesWithoutSyncAreLeftAsTheyAre) {
  TsSplicer s;
  auto a = packets({{0x1fff, true, 3}, {0x100, true, 1}});
  a[kTsPacket] = 0x00;  // not a packet
  s.splice();
  s.rewrite(a);
  EXPECT_EQ(counters(a), (std::vector<unsigned>{3, 1}));
  std::vector<std::uint8_t> partial(100, 0x47);  // less than a packet: nothing to do
  s.rewrite(partial);
  EXPECT_EQ(partial, std::vector<std::uint8_t>(100, 0x47));
}

}  // namespace
}  // namespace vod::client
