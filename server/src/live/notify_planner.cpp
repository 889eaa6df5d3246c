// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/notify_planner.hpp"

#include <algorithm>
#include <cstddef>

namespace vod::server::live {

namespace {

// Late join: the newest keyframe still in the ring, or null.
const RecordInfo* newest_keyframe(const ChannelView& view) {
  auto kf = std::find_if(view.recent.rbegin(), view.recent.rend(),
                         [&](const RecordInfo& r) { return (r.flags & proto::kLiveKeyframe) && r.offset >= view.oldest; });
  return kf == view.recent.rend() ? nullptr : &*kf;
}

// The last record of a notification that starts at record i0 and may take up to `take` records:
// never across a discontinuity (the client marks one at a notification's start, so a record that
// begins a new stream begins a notification of its own).
std::size_t last_record(const ChannelView& view, std::size_t i0, std::size_t take) {
  const std::size_t i1 = i0 + take - 1;
  for (std::size_t i = i0 + 1; i <= i1; ++i)
    if (view.recent[i].flags & proto::kLiveDiscontinuity) return i - 1;
  return i1;
}

// The newest keyframe that starts within [the notification's oldest offset, its end], among the
// records up to i1 (those before i0 included), or kNoKeyframe.
std::uint64_t keyframe_within(const ChannelView& view, std::size_t i1, std::uint64_t oldest, std::uint64_t end) {
  for (std::size_t i = i1 + 1; i-- > 0;) {
    const RecordInfo& r = view.recent[i];
    if ((r.flags & proto::kLiveKeyframe) && r.offset >= oldest && r.offset <= end) return r.offset;
  }
  return proto::kNoKeyframe;
}

// The notification of records i0..i1 (lost: the records before i0 are gone; it starts at `start`).
proto::LiveNotify describe(const ChannelView& view, std::size_t i0, std::size_t i1, bool lost, std::uint64_t start) {
  const RecordInfo& head = view.recent[i0];
  const RecordInfo& last = view.recent[i1];
  proto::LiveNotify n;
  n.stream_id = last.stream_id;
  n.stream_offset = std::min(start, last.end());
  n.length = static_cast<std::uint32_t>(last.end() - n.stream_offset);
  n.oldest_offset = std::min(view.oldest, last.end());
  n.pts_us = n.stream_offset == head.offset ? head.pts_us : 0;
  n.publish_time_us = last.publish_time_us;
  if (i1 > i0 || lost) n.flags |= proto::kLiveCoalesced;
  if ((head.flags & proto::kLiveKeyframe) && n.stream_offset == head.offset && head.offset >= n.oldest_offset)
    n.flags |= proto::kLiveKeyframe;
  if ((head.flags & proto::kLiveUnitStart) && n.stream_offset == head.offset) n.flags |= proto::kLiveUnitStart;
  for (std::size_t i = i0; i <= i1; ++i) n.flags |= view.recent[i].flags & proto::kLiveDiscontinuity;
  if (last.flags & proto::kLiveEndOfStream) n.flags |= proto::kLiveEndOfStream;
  return n;
}

}  // namespace

NotifyPlan plan_notifications(const ChannelView& view, NotifyCursor cursor, SendRoom room) {
  NotifyPlan plan;
  bool first = false;  // the first notification after the join: everything from the keyframe at once
  if (cursor.phase == NotifyCursor::Phase::joining) {
    const RecordInfo* kf = newest_keyframe(view);
    if (!kf && !view.ended) {
      plan.cursor = cursor;
      return plan;
    }
    // A channel that ended with no keyframe left to join at: the joiner is still told of the end
    // (else it would wait for a stream that is over).
    const RecordInfo& at = kf ? *kf : view.recent.back();
    cursor.next_record = at.number;
    cursor.next_offset = std::max(at.offset, view.oldest);
    cursor.phase = NotifyCursor::Phase::streaming;
    first = true;
  }
  while (room.credits > 0 && room.queue > 0) {
    if (view.recent.empty() || cursor.next_record > view.recent.back().number) break;
    const std::uint64_t base = view.recent.front().number;
    const bool lost = cursor.next_record < base;  // the records it was not told of are gone from the ring
    const std::size_t i0 = lost ? 0 : static_cast<std::size_t>(cursor.next_record - base);
    // A record whose first bytes were overwritten is still told from its start: the client finds
    // the overwrite (the ring's header) and skips it whole, to a clean packet boundary.
    const std::size_t pending = view.recent.size() - i0;
    // One record per notification while credit lasts; otherwise everything pending at once.
    const std::size_t take = (!lost && !first && pending <= room.credits) ? 1 : pending;
    const std::size_t i1 = last_record(view, i0, take);
    const std::uint64_t start = lost ? std::max(cursor.next_offset, view.oldest) : view.recent[i0].offset;
    proto::LiveNotify n = describe(view, i0, i1, lost, start);
    const RecordInfo& last = view.recent[i1];
    cursor.next_record = last.number + 1;
    cursor.next_offset = last.end();
    first = false;
    if (n.length == 0 && !(n.flags & proto::kLiveEndOfStream)) continue;  // nothing to tell: only an end of stream is empty
    n.keyframe_offset = keyframe_within(view, i1, n.oldest_offset, last.end());
    n.seq = cursor.seq++;
    n.credits = --room.credits;
    --room.queue;
    plan.notifications.push_back(n);
  }
  plan.cursor = cursor;
  return plan;
}

}  // namespace vod::server::live
