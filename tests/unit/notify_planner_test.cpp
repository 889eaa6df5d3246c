// SPDX-License-Identifier: LGPL-2.1-or-later
// plan_notifications(): the live notification policy as a table, {records, oldest, cursor, credits,
// queue room} -> notifications (every field) and the cursor after them, without a NIC; and
// ChannelView::add's eviction.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "live/channel_view.hpp"
#include "live/notify_planner.hpp"

namespace vod::server::live {
namespace {

constexpr std::uint32_t K = proto::kLiveKeyframe;
constexpr std::uint32_t U = proto::kLiveUnitStart;
constexpr std::uint32_t D = proto::kLiveDiscontinuity;
constexpr std::uint32_t E = proto::kLiveEndOfStream;
constexpr std::uint32_t C = proto::kLiveCoalesced;
constexpr std::uint64_t kNone = proto::kNoKeyframe;

// Record k: bytes [1000k, 1000k + 1000), pts 100 + k, published at 1000 + k, stream 1.
RecordInfo rec(std::uint64_t k, std::uint32_t flags, std::uint32_t stream = 1) {
  RecordInfo r;
  r.number = k;
  r.offset = 1000 * k;
  r.length = 1000;
  r.flags = flags;
  r.stream_id = stream;
  r.pts_us = 100 + k;
  r.publish_time_us = 1000 + k;
  return r;
}

// Record k with no bytes, at the offset record k would start at.
RecordInfo empty(std::uint64_t k, std::uint32_t flags) {
  RecordInfo r = rec(k, flags);
  r.length = 0;
  r.pts_us = 0;
  return r;
}

ChannelView view_of(std::initializer_list<RecordInfo> records, std::uint64_t oldest = 0) {
  ChannelView v;
  v.recent.assign(records.begin(), records.end());
  v.oldest = oldest;
  v.end = v.recent.empty() ? 0 : v.recent.back().end();
  v.ended = !v.recent.empty() && (v.recent.back().flags & E);
  return v;
}

// A GOP of four: records first..last, keyframes at every fourth, every record a unit start.
ChannelView gops(std::uint64_t first, std::uint64_t last, std::uint64_t oldest = 0) {
  ChannelView v = view_of({}, oldest);
  for (std::uint64_t k = first; k <= last; ++k) v.recent.push_back(rec(k, k % 4 == 0 ? K | U : U));
  v.end = v.recent.back().end();
  return v;
}

NotifyCursor joining() { return {}; }
NotifyCursor streaming(std::uint64_t next_record, std::uint64_t seq, std::uint64_t next_offset) {
  return {NotifyCursor::Phase::streaming, next_record, next_offset, seq};
}
NotifyCursor streaming(std::uint64_t next_record, std::uint64_t seq) { return streaming(next_record, seq, 1000 * next_record); }

// One expected notification; published is the last record's stamp.
struct Note {
  std::uint64_t seq = 0;
  std::uint64_t at = 0;
  std::uint32_t len = 0;
  std::uint32_t flags = 0;
  std::uint32_t credits = 0;
  std::uint64_t kf = kNone;
  std::uint64_t pts = 0;
  std::uint64_t published = 0;
  std::uint32_t stream = 1;
  std::uint64_t oldest = 0;
};

proto::LiveNotify notify(const Note& e) {
  proto::LiveNotify n;
  n.stream_id = e.stream;
  n.flags = e.flags;
  n.seq = e.seq;
  n.stream_offset = e.at;
  n.length = e.len;
  n.credits = e.credits;
  n.oldest_offset = e.oldest;
  n.keyframe_offset = e.kf;
  n.pts_us = e.pts;
  n.publish_time_us = e.published;
  return n;
}

std::string show(const proto::LiveNotify& n) {
  return "{seq " + std::to_string(n.seq) + " at " + std::to_string(n.stream_offset) + " len " + std::to_string(n.length) + " flags " +
         std::to_string(n.flags) + " credits " + std::to_string(n.credits) + " kf " +
         (n.keyframe_offset == kNone ? std::string("none") : std::to_string(n.keyframe_offset)) + " pts " + std::to_string(n.pts_us) +
         " published " + std::to_string(n.publish_time_us) + " stream " + std::to_string(n.stream_id) + " oldest " +
         std::to_string(n.oldest_offset) + "}";
}

struct Row {
  const char* name;
  ChannelView view;
  NotifyCursor cursor;
  SendRoom room;
  std::vector<Note> expect;
  NotifyCursor after;
};

ChannelView with(ChannelView v, std::uint64_t k, std::uint32_t flags, std::uint32_t stream) {
  for (auto& r : v.recent)
    if (r.number >= k) {
      if (r.number == k) r.flags |= flags;
      r.stream_id = stream;
    }
  return v;
}

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      // ---- late join
      {"join: no keyframe in the ring yet: nothing, still joining", view_of({rec(0, U), rec(1, U), rec(2, U)}), joining(), {8, 64}, {},
       joining()},
      {"join: the only keyframe is partly overwritten: nothing, still joining", gops(0, 2, 500), joining(), {8, 64}, {}, joining()},
      {"join: at the newest keyframe, everything from it coalesced although credits cover it", gops(0, 6), joining(), {8, 64},
       {{.seq = 0, .at = 4000, .len = 3000, .flags = K | U | C, .credits = 7, .kf = 4000, .pts = 104, .published = 1006}},
       streaming(7, 1)},
      {"join: the newest record is the keyframe: one record, not coalesced", gops(0, 4), joining(), {8, 64},
       {{.seq = 0, .at = 4000, .len = 1000, .flags = K | U, .credits = 7, .kf = 4000, .pts = 104, .published = 1004}},
       streaming(5, 1)},
      {"join: without credit it moves to the keyframe and sends nothing", gops(0, 6), joining(), {0, 64}, {}, streaming(4, 0)},
      {"join: a keyframe that begins a new stream keeps its discontinuity", with(gops(0, 5), 4, D, 2), joining(), {8, 64},
       {{.seq = 0, .at = 4000, .len = 2000, .flags = K | U | D | C, .credits = 7, .kf = 4000, .pts = 104, .published = 1005,
         .stream = 2}},
       streaming(6, 1)},

      // ---- coalescing
      {"credits cover what is pending: one notification per record, seq and credits counted", gops(0, 5), streaming(2, 5), {4, 64},
       {{.seq = 5, .at = 2000, .len = 1000, .flags = U, .credits = 3, .kf = 0, .pts = 102, .published = 1002},
        {.seq = 6, .at = 3000, .len = 1000, .flags = U, .credits = 2, .kf = 0, .pts = 103, .published = 1003},
        {.seq = 7, .at = 4000, .len = 1000, .flags = K | U, .credits = 1, .kf = 4000, .pts = 104, .published = 1004},
        {.seq = 8, .at = 5000, .len = 1000, .flags = U, .credits = 0, .kf = 4000, .pts = 105, .published = 1005}},
       streaming(6, 9)},
      {"fewer credits than pending: one coalesced notification, credit left over", gops(0, 3), streaming(1, 5), {2, 64},
       {{.seq = 5, .at = 1000, .len = 3000, .flags = U | C, .credits = 1, .kf = 0, .pts = 101, .published = 1003}},
       streaming(4, 6)},
      {"coalesced from a keyframe: the keyframe mark and its offset", gops(0, 6), streaming(4, 0), {1, 64},
       {{.seq = 0, .at = 4000, .len = 3000, .flags = K | U | C, .credits = 0, .kf = 4000, .pts = 104, .published = 1006}},
       streaming(7, 1)},
      {"unit start only when the first record starts a unit", view_of({rec(0, K | U), rec(1, 0), rec(2, U)}), streaming(1, 0), {1, 64},
       {{.seq = 0, .at = 1000, .len = 2000, .flags = C, .credits = 0, .kf = 0, .pts = 101, .published = 1002}},
       streaming(3, 1)},

      // ---- exhaustion
      {"no credit: nothing, cursor unchanged", gops(0, 5), streaming(2, 5), {0, 64}, {}, streaming(2, 5)},
      {"no queue room: nothing, cursor unchanged", gops(0, 5), streaming(2, 5), {8, 0}, {}, streaming(2, 5)},
      {"queue room short, credits plenty: one per record until it is full, the rest waits", gops(0, 5), streaming(2, 5), {8, 2},
       {{.seq = 5, .at = 2000, .len = 1000, .flags = U, .credits = 7, .kf = 0, .pts = 102, .published = 1002},
        {.seq = 6, .at = 3000, .len = 1000, .flags = U, .credits = 6, .kf = 0, .pts = 103, .published = 1003}},
       streaming(4, 7)},
      {"told of everything: nothing", gops(0, 5), streaming(6, 3), {8, 64}, {}, streaming(6, 3)},

      // ---- lost records
      {"lost records: coalesced from oldest, mid-record: no pts, keyframe or unit-start mark", gops(3, 6, 3500),
       streaming(1, 2), {8, 64},
       {{.seq = 2, .at = 3500, .len = 3500, .flags = C, .credits = 7, .kf = 4000, .pts = 0, .published = 1006, .oldest = 3500}},
       streaming(7, 3)},
      {"lost records starting at the first record's offset keep its pts and marks", gops(4, 6, 4000), streaming(2, 0), {8, 64},
       {{.seq = 0, .at = 4000, .len = 3000, .flags = K | U | C, .credits = 7, .kf = 4000, .pts = 104, .published = 1006,
         .oldest = 4000}},
       streaming(7, 1)},
      {"lost records whose bytes are still in the ring (the record cap): from next_offset", gops(3, 6, 0), streaming(1, 0), {8, 64},
       {{.seq = 0, .at = 1000, .len = 6000, .flags = C, .credits = 7, .kf = 4000, .pts = 0, .published = 1006}},
       streaming(7, 1)},
      {"lost records are split at a discontinuity too", with(gops(3, 6, 3500), 5, D, 2), streaming(1, 0), {8, 64},
       {{.seq = 0, .at = 3500, .len = 1500, .flags = C, .credits = 7, .kf = 4000, .pts = 0, .published = 1004, .oldest = 3500},
        {.seq = 1, .at = 5000, .len = 1000, .flags = U | D, .credits = 6, .kf = 4000, .pts = 105, .published = 1005, .stream = 2,
         .oldest = 3500},
        {.seq = 2, .at = 6000, .len = 1000, .flags = U, .credits = 5, .kf = 4000, .pts = 106, .published = 1006, .stream = 2,
         .oldest = 3500}},
       streaming(7, 3)},
      {"a first record partly overwritten but not lost is still sent from its start (the client skips it whole)", gops(0, 2, 500),
       streaming(0, 0), {1, 64},
       {{.seq = 0, .at = 0, .len = 3000, .flags = U | C, .credits = 0, .kf = kNone, .pts = 100, .published = 1002, .oldest = 500}},
       streaming(3, 1)},

      // ---- discontinuities
      {"a discontinuity mid-pending splits the coalesced notification; the flag is on the second",
       with(gops(0, 5), 3, D, 2), streaming(1, 0), {2, 64},
       {{.seq = 0, .at = 1000, .len = 2000, .flags = U | C, .credits = 1, .kf = 0, .pts = 101, .published = 1002},
        {.seq = 1, .at = 3000, .len = 3000, .flags = U | D | C, .credits = 0, .kf = 4000, .pts = 103, .published = 1005, .stream = 2}},
       streaming(6, 2)},
      {"credits cover a discontinuity: one per record, the flag on the record that begins the stream",
       with(gops(0, 4), 3, D, 2), streaming(2, 0), {8, 64},
       {{.seq = 0, .at = 2000, .len = 1000, .flags = U, .credits = 7, .kf = 0, .pts = 102, .published = 1002},
        {.seq = 1, .at = 3000, .len = 1000, .flags = U | D, .credits = 6, .kf = 0, .pts = 103, .published = 1003, .stream = 2},
        {.seq = 2, .at = 4000, .len = 1000, .flags = K | U, .credits = 5, .kf = 4000, .pts = 104, .published = 1004, .stream = 2}},
       streaming(5, 3)},
      {"a discontinuity as the first pending record: no split, the flag on the notification", with(gops(0, 5), 3, D, 2),
       streaming(3, 0), {1, 64},
       {{.seq = 0, .at = 3000, .len = 3000, .flags = U | D | C, .credits = 0, .kf = 4000, .pts = 103, .published = 1005, .stream = 2}},
       streaming(6, 1)},

      // ---- end of stream
      {"join: a channel that ended with no keyframe left is told of the end",
       view_of({rec(4, U), rec(5, U), empty(6, E)}, 4000), joining(), {8, 64},
       {{.seq = 0, .at = 6000, .len = 0, .flags = E, .credits = 7, .kf = kNone, .pts = 0, .published = 1006, .oldest = 4000}},
       streaming(7, 1, 6000)},
      {"an empty end of stream is sent", view_of({rec(0, K | U), rec(1, U), empty(2, E)}), streaming(2, 4), {3, 64},
       {{.seq = 4, .at = 2000, .len = 0, .flags = E, .credits = 2, .kf = 0, .pts = 0, .published = 1002}}, streaming(3, 5, 2000)},
      {"an end of stream coalesced with the records before it", view_of({rec(0, K | U), rec(1, U), empty(2, E)}), streaming(0, 0),
       {1, 64}, {{.seq = 0, .at = 0, .len = 2000, .flags = K | U | C | E, .credits = 0, .kf = 0, .pts = 100, .published = 1002}},
       streaming(3, 1, 2000)},
      {"an empty record without end of stream is passed over and spends nothing",
       view_of({rec(0, K | U), empty(1, U), [] { RecordInfo r = rec(1, U); r.number = 2; return r; }()}), streaming(1, 7), {2, 64},
       {{.seq = 7, .at = 1000, .len = 1000, .flags = U, .credits = 1, .kf = 0, .pts = 101, .published = 1001}}, streaming(3, 8, 2000)},

      // ---- keyframe_offset: the newest keyframe within [oldest, the notification's end]
      {"keyframe_offset: a keyframe after the notification's end is not named", gops(0, 5), streaming(3, 0), {8, 64},
       {{.seq = 0, .at = 3000, .len = 1000, .flags = U, .credits = 7, .kf = 0, .pts = 103, .published = 1003},
        {.seq = 1, .at = 4000, .len = 1000, .flags = K | U, .credits = 6, .kf = 4000, .pts = 104, .published = 1004},
        {.seq = 2, .at = 5000, .len = 1000, .flags = U, .credits = 5, .kf = 4000, .pts = 105, .published = 1005}},
       streaming(6, 3)},
      {"keyframe_offset: a keyframe before oldest is not named", gops(0, 3, 100), streaming(1, 0), {8, 64},
       {{.seq = 0, .at = 1000, .len = 1000, .flags = U, .credits = 7, .kf = kNone, .pts = 101, .published = 1001, .oldest = 100},
        {.seq = 1, .at = 2000, .len = 1000, .flags = U, .credits = 6, .kf = kNone, .pts = 102, .published = 1002, .oldest = 100},
        {.seq = 2, .at = 3000, .len = 1000, .flags = U, .credits = 5, .kf = kNone, .pts = 103, .published = 1003, .oldest = 100}},
       streaming(4, 3)},
  };
  return table;
}

TEST(NotifyPlanner, Table) {
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.name);
    const NotifyPlan plan = plan_notifications(row.view, row.cursor, row.room);
    std::vector<std::string> got, want;
    for (const auto& n : plan.notifications) got.push_back(show(n));
    for (const auto& e : row.expect) want.push_back(show(notify(e)));
    EXPECT_EQ(got, want);
    EXPECT_EQ(plan.cursor, row.after) << "next_record " << plan.cursor.next_record << " next_offset " << plan.cursor.next_offset << " seq "
                                      << plan.cursor.seq;
  }
}

TEST(NotifyPlanner, EveryNotificationSpendsOneCreditAndOneQueueSlot) {
  for (const Row& row : rows()) {
    SCOPED_TRACE(row.name);
    const NotifyPlan plan = plan_notifications(row.view, row.cursor, row.room);
    EXPECT_LE(plan.notifications.size(), std::min(row.room.credits, row.room.queue));
    for (std::size_t i = 0; i < plan.notifications.size(); ++i) {
      const auto& n = plan.notifications[i];
      EXPECT_EQ(n.seq, row.cursor.seq + i);
      EXPECT_EQ(n.credits, row.room.credits - 1 - i);
      EXPECT_TRUE(n.length > 0 || (n.flags & E));
      if (n.keyframe_offset != kNone) {
        EXPECT_GE(n.keyframe_offset, n.oldest_offset);
        EXPECT_LE(n.keyframe_offset, n.stream_offset + n.length);
      }
    }
  }
}

// The coalesced start of a join belongs to the call that joins: a viewer that joined without
// credit is later sent one record per notification (today's behaviour, kept by the move).
TEST(NotifyPlanner, AJoinWithoutCreditLaterSendsOneRecordEach) {
  const ChannelView v = gops(0, 6);
  const NotifyPlan joined = plan_notifications(v, joining(), {0, 64});
  EXPECT_TRUE(joined.notifications.empty());
  const NotifyPlan later = plan_notifications(v, joined.cursor, {8, 64});
  ASSERT_EQ(later.notifications.size(), 3u);
  EXPECT_EQ(later.notifications[0].stream_offset, 4000u);
  EXPECT_EQ(later.notifications[0].flags, K | U);
}

TEST(ChannelView, AddDropsWhatTheRingOverwrote) {
  ChannelView v;
  for (std::uint64_t k = 0; k < 3; ++k) v.add(rec(k, U));
  EXPECT_EQ(v.recent.size(), 3u);
  EXPECT_EQ(v.end, 3000u);
  RecordInfo r = rec(3, K | U);
  r.oldest = 2000;  // records 0 (ends before) and 1 (ends at it) are gone; 2 is whole
  v.add(r);
  ASSERT_EQ(v.recent.size(), 2u);
  EXPECT_EQ(v.recent.front().number, 2u);
  EXPECT_EQ(v.oldest, 2000u);
  EXPECT_FALSE(v.ended);
  RecordInfo eos = empty(4, E);
  eos.oldest = 2500;  // record 2 is partly overwritten: it stays
  v.add(eos);
  ASSERT_EQ(v.recent.size(), 3u);
  EXPECT_EQ(v.recent.front().number, 2u);
  EXPECT_EQ(v.end, 4000u);
  EXPECT_TRUE(v.ended);
  RecordInfo next = rec(4, D | K | U);
  next.number = 5;
  next.oldest = 4000;  // everything with bytes up to 4000 is gone; the empty end of stream at 4000 stays
  v.add(next);
  ASSERT_EQ(v.recent.size(), 2u);
  EXPECT_EQ(v.recent.front().number, 4u);
  EXPECT_EQ(v.recent.back().number, 5u);
  EXPECT_FALSE(v.ended);
  RecordInfo later = rec(6, U);
  later.oldest = 4001;  // an empty record that ends before oldest goes too
  v.add(later);
  ASSERT_EQ(v.recent.size(), 2u);
  EXPECT_EQ(v.recent.front().number, 5u);
}

TEST(ChannelView, AddKeepsAtMostKMaxRecentRecords) {
  ChannelView v;
  const std::uint64_t n = ChannelView::kMaxRecent + 10;
  for (std::uint64_t k = 0; k < n; ++k) v.add(rec(k, U));
  EXPECT_EQ(v.recent.size(), ChannelView::kMaxRecent);
  EXPECT_EQ(v.recent.front().number, 10u);
  EXPECT_EQ(v.recent.back().number, n - 1);
  EXPECT_EQ(v.oldest, 0u);
  EXPECT_EQ(v.end, 1000 * n);
}

}  // namespace
}  // namespace vod::server::live
