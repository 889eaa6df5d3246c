// SPDX-License-Identifier: LGPL-2.1-or-later
// The live ring: bytes land at stream offset mod size, the header says which offsets are valid,
// and the oldest offset moves before any byte is overwritten.
#include <gtest/gtest.h>

#include <numeric>

#include "live/live_ring.hpp"

namespace vod::server::live {
namespace {

proto::LiveHeader header_of(const LiveRing& ring) {
  auto h = proto::decode_live_header(ring.header_memory().bytes(), ring.size());
  EXPECT_TRUE(h.ok()) << h.error().message;
  return h.ok() ? *h : proto::LiveHeader{};
}

std::vector<std::uint8_t> record(std::size_t n, std::uint8_t seed) {
  std::vector<std::uint8_t> r(n);
  std::iota(r.begin(), r.end(), seed);
  return r;
}

TEST(LiveRing, PublishesRecordsAndKeepsTheHeaderConsistent) {
  LiveRing ring(10'000);
  EXPECT_EQ(header_of(ring).write_offset, 0u);
  EXPECT_EQ(header_of(ring).keyframe_offset, proto::kNoKeyframe);
  ring.set_stream(7, false);
  auto a = ring.publish(record(3000, 1), true, 40'000);
  EXPECT_EQ(a.offset, 0u);
  auto b = ring.publish(record(3000, 2), false, 0);
  EXPECT_EQ(b.offset, 3000u);
  const auto h = header_of(ring);
  EXPECT_EQ(h.write_offset, 6000u);
  EXPECT_EQ(h.oldest_offset, 0u);
  EXPECT_EQ(h.keyframe_offset, 0u);
  EXPECT_EQ(h.keyframe_pts_us, 40'000u);
  EXPECT_EQ(h.stream_id, 7u);
  const auto bytes = ring.ring_memory().bytes();
  EXPECT_TRUE(std::equal(bytes.begin() + 3000, bytes.begin() + 6000, record(3000, 2).begin()));
}

TEST(LiveRing, WrapsAroundAndMovesTheOldestOffsetFirst) {
  LiveRing ring(10'000);
  ring.publish(record(4000, 1), true, 1);            // [0, 4000)
  ring.publish(record(4000, 2), false, 2);           // [4000, 8000)
  auto c = ring.publish(record(4000, 3), false, 3);  // [8000, 12000): wraps, overwrites [0, 2000)
  EXPECT_EQ(c.offset, 8000u);
  EXPECT_EQ(c.oldest, 2000u);
  EXPECT_EQ(c.keyframe, proto::kNoKeyframe);  // the keyframe at 0 is gone
  const auto h = header_of(ring);
  EXPECT_EQ(h.write_offset, 12'000u);
  EXPECT_EQ(h.oldest_offset, 2000u);
  EXPECT_EQ(h.keyframe_offset, proto::kNoKeyframe);
  const auto bytes = ring.ring_memory().bytes();
  const auto third = record(4000, 3);
  EXPECT_TRUE(std::equal(third.begin(), third.begin() + 2000, bytes.begin() + 8000));
  EXPECT_TRUE(std::equal(third.begin() + 2000, third.end(), bytes.begin()));
  EXPECT_THROW(ring.publish(record(5001, 4), false, 0), std::invalid_argument);  // more than half the ring
}

TEST(LiveRing, EndOfStreamIsInTheHeaderFlags) {
  LiveRing ring(4096);
  ring.set_stream(2, true);
  EXPECT_EQ(header_of(ring).flags, proto::kLiveHeaderEndOfStream);
  ring.set_stream(3, false);
  EXPECT_EQ(header_of(ring).flags, 0u);
  EXPECT_EQ(header_of(ring).stream_id, 3u);
}

}  // namespace
}  // namespace vod::server::live
