// SPDX-License-Identifier: LGPL-2.1-or-later
// What the event loop knows of a channel: the records still in its ring, newest last. The live
// service adds each record the channel publishes; plan_notifications (notify_planner.hpp) reads it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "live/channel.hpp"

namespace vod::server::live {

struct ChannelView {
  // Records kept at most, whatever the ring still holds: a viewer told of none of the older ones
  // gets them as lost records (one coalesced notification from where it was).
  static constexpr std::size_t kMaxRecent = std::size_t{1} << 16;

  std::deque<RecordInfo> recent;
  std::uint64_t end = 0;     // the published end (write offset)
  std::uint64_t oldest = 0;  // the oldest valid offset
  bool ended = false;        // the newest record is an end of stream

  // Appends `r` and takes its end and oldest offset; then drops, from the front, every record the
  // ring has fully overwritten (it ends before `oldest`, or at it with bytes of its own: an empty
  // end of stream there stays) and whatever exceeds kMaxRecent.
  void add(const RecordInfo& r);
};

}  // namespace vod::server::live
