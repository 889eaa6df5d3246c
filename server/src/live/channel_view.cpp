// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/channel_view.hpp"

#include "vod/protocol/live_messages.hpp"

namespace vod::server::live {

void ChannelView::add(const RecordInfo& r) {
  recent.push_back(r);
  end = r.end();
  oldest = r.oldest;
  ended = (r.flags & proto::kLiveEndOfStream) != 0;
  // Records fully overwritten are of no use to anyone: a viewer that was not told of them skips.
  while (!recent.empty() &&
         (recent.front().end() < oldest || (recent.front().end() == oldest && recent.front().length > 0) || recent.size() > kMaxRecent))
    recent.pop_front();
}

}  // namespace vod::server::live
