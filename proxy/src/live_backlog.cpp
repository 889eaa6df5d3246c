// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_backlog.hpp"

#include <algorithm>

namespace vod::proxy {

void LiveBacklog::append(FanoutChunkPtr chunk) {
  if (!chunk || chunk->bytes.empty()) return;
  if (!chunks_.empty() && chunk->offset != end_) {
    // Not contiguous (the chunker never does this): forget the old bytes; every viewer jumps.
    chunks_.clear();
    bytes_ = 0;
  }
  end_ = chunk->end();
  bytes_ += chunk->bytes.size();
  chunks_.push_back(std::move(chunk));
  while (bytes_ > capacity_ && chunks_.size() > 1) {
    bytes_ -= chunks_.front()->bytes.size();
    chunks_.pop_front();
  }
}

const FanoutChunkPtr& LiveBacklog::newest_join_point() const {
  for (auto it = chunks_.rbegin(); it != chunks_.rend(); ++it)
    if ((*it)->join_point) return *it;
  return chunks_.front();  // no keyframe held: the oldest packet boundary; the player resynchronises
}

BacklogStep LiveBacklog::next(ViewerCursor& viewer) const {
  if (chunks_.empty()) return {};
  if (!viewer.started || viewer.position < begin()) {
    const FanoutChunkPtr& chunk = newest_join_point();
    BacklogStep step{chunk, false, 0};
    if (viewer.started) {
      step.discontinuity = true;
      step.skipped_bytes = chunk->offset - viewer.position;
    }
    viewer.started = true;
    viewer.position = chunk->end();
    return step;
  }
  if (viewer.position >= end_) return {};
  // The chunk that holds the position (a viewer always stops at a chunk's end, so it starts there).
  auto it = std::upper_bound(chunks_.begin(), chunks_.end(), viewer.position,
                             [](std::uint64_t position, const FanoutChunkPtr& c) { return position < c->offset; });
  --it;
  viewer.position = (*it)->end();
  return {*it, false, 0};
}

}  // namespace vod::proxy
