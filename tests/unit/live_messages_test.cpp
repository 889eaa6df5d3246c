// SPDX-License-Identifier: LGPL-2.1-or-later
// Live notification, credit and header region: offsets byte by byte, round trips, and every
// malformed field named by the decoder.
#include <gtest/gtest.h>

#include "live/credits.hpp"
#include "vod/protocol/live_messages.hpp"
#include "wire_test_support.hpp"

namespace vod::proto {
namespace {

using test::ByteVector;
using test::fails_with;
using test::get_be;
using test::put_be;

LiveNotify notify() {
  LiveNotify n;
  n.stream_id = 5;
  n.flags = kLiveKeyframe;
  n.seq = 42;
  n.stream_offset = 1'000'000;
  n.length = 65536;
  n.credits = 8;
  n.oldest_offset = 900'000;
  n.keyframe_offset = 1'000'000;
  n.pts_us = 33'000'000;
  n.publish_time_us = 1'700'000'000'000'000;
  return n;
}

TEST(LiveNotify, LayoutAndRoundTrip) {
  const LiveNotify n = notify();
  const ByteVector v = encode(n);
  ASSERT_EQ(v.size(), 72u);
  EXPECT_EQ(v[5], 4);
  EXPECT_EQ(get_be(v, 6, 2), 72u);
  EXPECT_EQ(get_be(v, 8, 4), 5u);
  EXPECT_EQ(get_be(v, 12, 4), kLiveKeyframe);
  EXPECT_EQ(get_be(v, 16, 8), 42u);
  EXPECT_EQ(get_be(v, 24, 8), 1'000'000u);
  EXPECT_EQ(get_be(v, 32, 4), 65536u);
  EXPECT_EQ(get_be(v, 36, 4), 8u);
  EXPECT_EQ(get_be(v, 40, 8), 900'000u);
  EXPECT_EQ(get_be(v, 48, 8), 1'000'000u);
  EXPECT_EQ(get_be(v, 56, 8), 33'000'000u);
  EXPECT_EQ(get_be(v, 64, 8), 1'700'000'000'000'000u);
  EXPECT_EQ(*decode_live_notify(v), n);
}

TEST(LiveNotify, RejectsEachMalformedField) {
  const ByteVector good = encode(notify());
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) {
    return decode_live_notify(test::with(good, at, value, width));
  };
  EXPECT_TRUE(fails_with(poked(5, 5, 1), DecodeFault::wrong_type, "message type 5"));
  EXPECT_TRUE(fails_with(poked(6, 56, 2), DecodeFault::bad_length, "below this message's 72 bytes"));
  EXPECT_TRUE(fails_with(poked(12, 0x20, 4), DecodeFault::bad_field, "undefined flags 0x20"));
  EXPECT_TRUE(fails_with(poked(32, 0, 4), DecodeFault::bad_field, "zero length without end-of-stream"));
  EXPECT_TRUE(fails_with(poked(24, ~0ull - 10, 8), DecodeFault::bad_field, "wraps"));
  EXPECT_TRUE(fails_with(poked(40, 1'065'537, 8), DecodeFault::inconsistent, "oldest offset 1065537"));
  EXPECT_TRUE(fails_with(poked(48, 2'000'000, 8), DecodeFault::inconsistent, "keyframe offset 2000000"));
  EXPECT_TRUE(fails_with(poked(48, 950'000, 8), DecodeFault::inconsistent, "keyframe flag"));
  EXPECT_TRUE(fails_with(decode_live_notify(ByteVector(good.begin(), good.begin() + 60)), DecodeFault::truncated, "only 60 bytes"));
}

TEST(LiveNotify, CoalescedRangeMayStartBeforeTheOldestByte) {
  // A client that was out of credit gets one notification for everything it missed; its start may
  // already be overwritten, which is how it learns to skip.
  LiveNotify n = notify();
  n.flags = kLiveCoalesced;
  n.oldest_offset = 1'010'000;
  n.keyframe_offset = 1'020'000;
  EXPECT_EQ(*decode_live_notify(encode(n)), n);
}

TEST(LiveNotify, EndOfStreamMayBeEmptyAndLongerMessagesKeepTheirPrefix) {
  LiveNotify n = notify();
  n.flags = kLiveEndOfStream;
  n.length = 0;
  n.keyframe_offset = kNoKeyframe;
  n.oldest_offset = 0;
  EXPECT_EQ(*decode_live_notify(encode(n)), n);
  ByteVector later = encode(notify());  // a later revision appended 8 bytes
  later.resize(80, 0xee);
  put_be(later, 6, 80, 2);
  EXPECT_EQ(*decode_live_notify(later), notify());
}

TEST(LiveCredit, LayoutRoundTripAndErrors) {
  const LiveCredit c{16, 41};
  const ByteVector v = encode(c);
  ASSERT_EQ(v.size(), 24u);
  EXPECT_EQ(v[5], 5);
  EXPECT_EQ(get_be(v, 8, 4), 16u);
  EXPECT_EQ(get_be(v, 16, 8), 41u);
  EXPECT_EQ(*decode_live_credit(v), c);
  ByteVector zero = v;
  put_be(zero, 8, 0, 4);
  EXPECT_TRUE(fails_with(decode_live_credit(zero), DecodeFault::bad_field, "granting 0 credits"));
  EXPECT_TRUE(fails_with(decode_live_credit(ByteVector(v.begin(), v.begin() + 20)), DecodeFault::truncated, "only 20 bytes"));
}

LiveHeader header() {
  LiveHeader h;
  h.write_offset = 5'000'000;
  h.oldest_offset = 4'000'000;
  h.keyframe_offset = 4'800'000;
  h.keyframe_pts_us = 12'000'000;
  h.stream_id = 3;
  h.sequence = 18;
  return h;
}

TEST(LiveHeaderRegion, LayoutPutsTheSequenceAtBothEnds) {
  const ByteVector v = encode(header());
  ASSERT_EQ(v.size(), 64u);
  EXPECT_EQ(get_be(v, 0, 4), kLiveHeaderMagic);
  EXPECT_EQ(v[4], 1);
  EXPECT_EQ(get_be(v, 6, 2), 64u);
  EXPECT_EQ(get_be(v, 8, 8), 18u);  // seq_end: first in the line
  EXPECT_EQ(get_be(v, 16, 8), 5'000'000u);
  EXPECT_EQ(get_be(v, 24, 8), 4'000'000u);
  EXPECT_EQ(get_be(v, 32, 8), 4'800'000u);
  EXPECT_EQ(get_be(v, 40, 8), 12'000'000u);
  EXPECT_EQ(get_be(v, 48, 4), 3u);
  EXPECT_EQ(get_be(v, 52, 4), 0u);
  EXPECT_EQ(get_be(v, 56, 8), 18u);  // seq_begin: last in the line
  EXPECT_EQ(*decode_live_header(v, 1'000'000), header());
}

TEST(LiveHeaderRegion, TornAndInconsistentSnapshotsAreRefused) {
  const ByteVector good = encode(header());
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width, std::uint64_t ring = 1'000'000) {
    return decode_live_header(test::with(good, at, value, width), ring);
  };
  EXPECT_TRUE(fails_with(poked(56, 19, 8), DecodeFault::inconsistent, "torn snapshot"));
  EXPECT_TRUE(fails_with(poked(0, 0x52564F44, 4), DecodeFault::bad_magic, "magic"));
  EXPECT_TRUE(fails_with(poked(24, 5'000'001, 8), DecodeFault::inconsistent, "does not fit"));
  EXPECT_TRUE(fails_with(poked(24, 3'999'999, 8), DecodeFault::inconsistent, "does not fit the 1000000-byte ring"));
  EXPECT_TRUE(fails_with(poked(32, 3'000'000, 8), DecodeFault::inconsistent, "keyframe offset 3000000"));
  EXPECT_TRUE(fails_with(poked(52, 2, 4), DecodeFault::bad_field, "undefined flags"));
  EXPECT_TRUE(fails_with(decode_live_header(ByteVector(good.begin(), good.begin() + 63), 1'000'000), DecodeFault::truncated, "63 bytes"));
  EXPECT_TRUE(poked(32, kNoKeyframe, 8).ok());
}

}  // namespace
}  // namespace vod::proto

namespace vod::server::live {
namespace {

// A credit message's count comes from the client: however large, the sum is capped, not wrapped
// (a 32-bit sum of 10 + 0xffffffff was 9).
TEST(LiveCredits, SumIsCappedNeverWrapped) {
  EXPECT_EQ(add_credits(0, 8), 8u);
  EXPECT_EQ(add_credits(10, 0xffffffffu), kMaxCredits);
  EXPECT_EQ(add_credits(kMaxCredits, 0xffffffffu), kMaxCredits);
  EXPECT_EQ(add_credits(0xffffffffu, 1), kMaxCredits);
  EXPECT_EQ(add_credits(kMaxCredits - 1, 1), kMaxCredits);
  EXPECT_EQ(add_credits(kMaxCredits - 1, 2), kMaxCredits);
}

}  // namespace
}  // namespace vod::server::live
