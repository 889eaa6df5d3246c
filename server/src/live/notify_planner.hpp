// SPDX-License-Identifier: LGPL-2.1-or-later
// The live notification policy, as a pure decision: from what a channel has published (ChannelView),
// where a viewer stands (NotifyCursor) and what it may be sent (SendRoom), the notifications to Send
// it now, in order. No verbs: Viewer::pump posts them; tests/unit/notify_planner_test.cpp is its table.
//
//   joining    the viewer has credit but has been told nothing. It starts at the newest keyframe
//              still in the ring (offset >= oldest), so its first bytes decode at once; with none
//              there it stays joining and is sent nothing. The join happens even without room to
//              send; the first notification after it coalesces everything from that keyframe only
//              when it is sent by the same call.
//   streaming  while credits and queue room last (each notification spends one of each):
//              - everything the viewer was told of is still in `recent`, and its credits cover the
//                pending records: one notification per record;
//              - fewer credits than pending records, records it was not told of already dropped
//                from `recent` (lost), or the first notification after the join: one coalesced
//                notification for all of it. Lost records start at max(next_offset, oldest), with
//                no pts, keyframe or unit-start mark unless that is the first record's own offset.
//              A short queue alone does not coalesce: what it has no room for waits for completions.
//              A notification never spans a discontinuity: a record that begins a new stream begins
//              a notification of its own. Only an end of stream may be empty; an empty record
//              without one is passed over, and spends nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "live/channel_view.hpp"
#include "vod/protocol/live_messages.hpp"

namespace vod::server::live {

// Where one viewer stands in a channel.
struct NotifyCursor {
  enum class Phase { joining, streaming };
  Phase phase = Phase::joining;
  std::uint64_t next_record = 0;  // the number of the first record this viewer has not been told of
  std::uint64_t next_offset = 0;  // the stream offset that record starts at, as far as the viewer knows
  std::uint64_t seq = 0;          // of the next notification

  bool operator==(const NotifyCursor&) const = default;
};

// What may be sent now.
struct SendRoom {
  std::uint32_t credits = 0;  // credits the viewer holds
  std::uint32_t queue = 0;    // free send-queue slots: the send depth minus the Sends not yet completed
};

struct NotifyPlan {
  std::vector<proto::LiveNotify> notifications;  // in order; seq from cursor.seq, +1 each
  NotifyCursor cursor;                           // after all of them are sent
};

// Each notification carries in `credits` the credits left once it is sent.
NotifyPlan plan_notifications(const ChannelView& view, NotifyCursor cursor, SendRoom room);

}  // namespace vod::server::live
