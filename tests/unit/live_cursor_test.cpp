// SPDX-License-Identifier: LGPL-2.1-or-later
// The live viewer's decisions without a NIC: late join at a keyframe, reads of what was published,
// overwrite detection, skipping when it fell behind, discontinuities, end of stream, clean finish.
#include <gtest/gtest.h>

#include "vod/client/live_cursor.hpp"

namespace vod::client {
namespace {

proto::LiveNotify notify(std::uint64_t offset, std::uint32_t length, std::uint32_t flags, std::uint64_t oldest, std::uint64_t keyframe) {
  proto::LiveNotify n;
  n.stream_offset = offset;
  n.length = length;
  n.flags = flags;
  n.oldest_offset = oldest;
  n.keyframe_offset = keyframe;
  return n;
}

proto::LiveHeader header(std::uint64_t write, std::uint64_t oldest, std::uint64_t keyframe) {
  proto::LiveHeader h;
  h.write_offset = write;
  h.oldest_offset = oldest;
  h.keyframe_offset = keyframe;
  return h;
}

constexpr std::uint32_t kKey = proto::kLiveKeyframe | proto::kLiveUnitStart;

TEST(LiveCursor, JoinsAtTheFirstNotificationsKeyframeAndReadsWhatIsPublished) {
  LiveCursor c(100'000, false);
  EXPECT_FALSE(c.next_read(1000));
  c.on_notify(notify(5000, 3000, kKey | proto::kLiveCoalesced, 0, 5000));
  ASSERT_TRUE(c.started());
  EXPECT_EQ(c.position(), 5000u);
  EXPECT_EQ(c.next_read(1000), (LiveRange{5000, 6000}));
  EXPECT_EQ(c.next_read(10'000), (LiveRange{5000, 8000}));
  ASSERT_TRUE(c.validate({5000, 8000}, header(8000, 0, 5000)));
  const auto d = c.deliver({5000, 8000});
  EXPECT_FALSE(d.discontinuity);
  EXPECT_EQ(c.position(), 8000u);
  EXPECT_FALSE(c.next_read(1000));  // nothing new yet
  c.on_notify(notify(8000, 500, 0, 0, 5000));
  EXPECT_EQ(c.next_read(1000), (LiveRange{8000, 8500}));
}

TEST(LiveCursor, BytesOverwrittenWhileBeingReadAreNeverDelivered) {
  LiveCursor c(10'000, false);
  c.on_notify(notify(0, 4000, kKey, 0, 0));
  const auto r = *c.next_read(4000);
  // The header read after the bytes says the source has moved past them meanwhile.
  EXPECT_FALSE(c.validate(r, header(13'000, 3000, 12'000)));
  EXPECT_EQ(c.stats().overwritten, 1u);
  // The next read skips to the newest keyframe (what is there is known from notifications), and
  // that delivery is marked.
  EXPECT_FALSE(c.next_read(100'000));
  EXPECT_EQ(c.position(), 12'000u);
  c.on_notify(notify(4000, 9000, proto::kLiveCoalesced, 3000, 12'000));
  const auto next = c.next_read(100'000);
  ASSERT_TRUE(next);
  EXPECT_EQ(next->begin, 12'000u);
  EXPECT_EQ(c.stats().skips, 1u);
  EXPECT_EQ(c.stats().skipped_bytes, 12'000u);
  EXPECT_TRUE(c.validate(*next, header(13'000, 3000, 12'000)));
  EXPECT_TRUE(c.deliver(*next).discontinuity);
}

TEST(LiveCursor, AViewerThatFellOutOfTheRingWaitsForAKeyframeWhenNoneIsLeft) {
  LiveCursor c(10'000, false);
  c.on_notify(notify(0, 1000, kKey, 0, 0));
  c.deliver(*c.next_read(1000));
  // Coalesced: it missed a lot; the oldest byte is past its position and no keyframe is in the ring.
  c.on_notify(notify(1000, 20'000, proto::kLiveCoalesced, 11'000, proto::kNoKeyframe));
  EXPECT_FALSE(c.next_read(100'000));
  EXPECT_FALSE(c.started());
  c.on_notify(notify(21'000, 800, proto::kLiveUnitStart, 11'800, proto::kNoKeyframe));
  EXPECT_FALSE(c.next_read(100'000));  // not a keyframe: still waiting
  c.on_notify(notify(21'800, 900, kKey, 12'700, 21'800));
  const auto r = c.next_read(100'000);
  ASSERT_TRUE(r);
  EXPECT_EQ(*r, (LiveRange{21'800, 22'700}));
  EXPECT_TRUE(c.deliver(*r).discontinuity);
  EXPECT_EQ(c.stats().skips, 1u);
}

TEST(LiveCursor, ADiscontinuityStartsADeliveryOfItsOwn) {
  LiveCursor c(100'000, false);
  c.on_notify(notify(0, 1000, kKey, 0, 0));
  c.on_notify(notify(1000, 1000, kKey | proto::kLiveDiscontinuity, 0, 1000));  // the source looped
  const auto first = *c.next_read(10'000);
  EXPECT_EQ(first, (LiveRange{0, 1000}));  // stops before the loop
  EXPECT_FALSE(c.deliver(first).discontinuity);
  const auto second = *c.next_read(10'000);
  EXPECT_EQ(second, (LiveRange{1000, 2000}));
  EXPECT_TRUE(c.deliver(second).discontinuity);
}

TEST(LiveCursor, EndOfStreamIsReportedWithTheLastBytesOrAlone) {
  LiveCursor c(100'000, false);
  c.on_notify(notify(0, 1000, kKey, 0, 0));
  c.on_notify(notify(1000, 0, proto::kLiveEndOfStream, 0, 0));
  EXPECT_TRUE(c.deliver(*c.next_read(10'000)).end_of_stream);
  EXPECT_FALSE(c.take_end_of_stream());
  c.on_notify(notify(1000, 500, kKey | proto::kLiveDiscontinuity, 0, 1000));  // the source is back
  c.deliver(*c.next_read(10'000));
  c.on_notify(notify(1500, 0, proto::kLiveEndOfStream, 0, 1000));
  EXPECT_FALSE(c.next_read(10'000));
  EXPECT_TRUE(c.take_end_of_stream());
  EXPECT_EQ(c.stats().end_of_streams, 2u);
}

TEST(LiveCursor, FinishingStopsAtTheNextFrameBoundary) {
  LiveCursor c(100'000, false);
  c.on_notify(notify(0, 1000, kKey, 0, 0));
  c.on_notify(notify(1000, 700, 0, 0, 0));                      // the rest of frame 0
  c.on_notify(notify(1700, 900, proto::kLiveUnitStart, 0, 0));  // frame 1
  const auto r = *c.next_read(10'000);
  EXPECT_EQ(r, (LiveRange{0, 2600}));
  c.finish();
  EXPECT_EQ(c.deliverable_end(r), 1700u);
  c.deliver({0, 1700});
  EXPECT_TRUE(c.finished());
  EXPECT_FALSE(c.next_read(10'000));
}

TEST(LiveCursor, FinishingAlsoStopsAtAKeyframeThatCoalescedNotificationsTellOf) {
  // A slow viewer with few credits: its notifications are coalesced and follow lost records, so
  // they start mid-frame and carry no frame start. Their keyframe offsets are frame starts too.
  constexpr std::uint32_t kLost = proto::kLiveCoalesced;
  LiveCursor c(100'000, false);
  c.on_notify(notify(0, 1000, kKey, 0, 0));
  c.deliver(*c.next_read(10'000));
  c.finish();
  c.on_notify(notify(1000, 3000, kLost, 0, 0));  // mid-frame; its newest keyframe is behind it
  EXPECT_EQ(c.deliverable_end(*c.next_read(10'000)), 4000u);
  c.deliver({1000, 4000});
  EXPECT_FALSE(c.finished());
  c.on_notify(notify(4000, 5000, kLost, 0, 6500));  // a keyframe record began at 6500
  const auto r = *c.next_read(10'000);
  EXPECT_EQ(c.deliverable_end(r), 6500u);
  c.deliver({4000, 6500});
  EXPECT_TRUE(c.finished());
  // The header's newest keyframe counts likewise for a viewer of notifications.
  LiveCursor h(100'000, false);
  h.on_notify(notify(0, 1000, kKey, 0, 0));
  h.deliver(*h.next_read(10'000));
  h.finish();
  h.on_notify(notify(1000, 3000, kLost, 0, 0));
  const auto r2 = *h.next_read(10'000);
  EXPECT_TRUE(h.validate(r2, header(4000, 0, 2500)));
  EXPECT_EQ(h.deliverable_end(r2), 2500u);
}

TEST(LiveCursor, WithNotificationsTheHeaderNeverExtendsWhatIsRead) {
  // The header read after a batch may list a record whose notification (and its discontinuity
  // flag) is still on its way: reading it now would deliver two streams as one.
  LiveCursor c(100'000, false);
  c.on_notify(notify(0, 1000, kKey, 0, 0));
  const auto r = *c.next_read(100'000);
  EXPECT_TRUE(c.validate(r, header(5000, 0, 3000)));
  c.deliver(r);
  EXPECT_FALSE(c.next_read(100'000));
  c.on_notify(notify(1000, 2000, 0, 0, 0));
  c.on_notify(notify(3000, 2000, kKey | proto::kLiveDiscontinuity, 0, 3000));
  EXPECT_EQ(*c.next_read(100'000), (LiveRange{1000, 3000}));
}

TEST(LiveCursor, AHeaderAloneIsEnoughToFollowTheStream) {
  LiveCursor c(100'000, true);
  c.on_header(header(9000, 0, proto::kNoKeyframe));
  EXPECT_FALSE(c.started());  // no keyframe yet: nothing decodable to start at
  c.on_header(header(12'000, 0, 9000));
  ASSERT_TRUE(c.started());
  EXPECT_EQ(c.next_read(100'000), (LiveRange{9000, 12'000}));
  c.deliver({9000, 12'000});
  // A new stream id: the source restarted; its keyframe begins a delivery of its own.
  auto restarted = header(20'000, 0, 15'000);
  restarted.stream_id = 2;
  c.on_header(restarted);
  EXPECT_EQ(*c.next_read(100'000), (LiveRange{12'000, 15'000}));
  c.deliver({12'000, 15'000});
  const auto after = *c.next_read(100'000);
  EXPECT_EQ(after, (LiveRange{15'000, 20'000}));
  EXPECT_TRUE(c.deliver(after).discontinuity);
}

}  // namespace
}  // namespace vod::client

namespace vod::client {
namespace {

// A viewer coming from the DVR window starts where the window left off while the ring holds it,
// without a discontinuity; once the ring has lost it, at the newest keyframe, marked.
TEST(LiveCursor, StartsWhereTheWindowLeftOffWhileTheRingHoldsIt) {
  LiveCursor held(100'000, false);
  held.start_from(3000);
  held.on_notify(notify(5000, 3000, kKey | proto::kLiveCoalesced, 1000, 5000));
  ASSERT_TRUE(held.started());
  EXPECT_EQ(held.position(), 3000u);
  EXPECT_EQ(held.next_read(100'000), (LiveRange{3000, 8000}));
  ASSERT_TRUE(held.validate({3000, 8000}, header(8000, 1000, 5000)));
  EXPECT_FALSE(held.deliver({3000, 8000}).discontinuity);

  LiveCursor lost(100'000, false);
  lost.start_from(500);
  lost.on_notify(notify(5000, 3000, kKey | proto::kLiveCoalesced, 1000, 5000));
  ASSERT_TRUE(lost.started());
  EXPECT_EQ(lost.position(), 5000u);
  ASSERT_TRUE(lost.validate({5000, 8000}, header(8000, 1000, 5000)));
  EXPECT_TRUE(lost.deliver({5000, 8000}).discontinuity);

  LiveCursor ahead(100'000, true);  // following the header: it waits until the ring reaches the offset
  ahead.start_from(9000);
  ahead.on_header(header(8000, 0, 5000));
  EXPECT_FALSE(ahead.started());
  ahead.on_header(header(9500, 0, 5000));
  ASSERT_TRUE(ahead.started());
  EXPECT_EQ(ahead.position(), 9000u);
}

}  // namespace
}  // namespace vod::client
