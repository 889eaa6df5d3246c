// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/live_cursor.hpp"

#include <algorithm>
#include <utility>

namespace vod::client {

void LiveCursor::start_at(std::uint64_t offset) {
  started_ = true;
  position_ = offset;
  discontinuities_.erase(discontinuities_.begin(), discontinuities_.lower_bound(offset));
  unit_starts_.erase(unit_starts_.begin(), unit_starts_.lower_bound(offset));
  if (std::exchange(rejoin_, false)) discontinuities_.insert(offset);  // after a skip that had to wait for a keyframe
}

bool LiveCursor::start_wanted() {
  if (started_ || !wanted_ || known_end_ == 0) return started_;
  if (*wanted_ >= oldest_ && *wanted_ <= known_end_) {
    start_at(*std::exchange(wanted_, std::nullopt));
    return true;
  }
  if (*wanted_ < oldest_) {  // gone from the ring already: the newest keyframe, marked
    wanted_.reset();
    rejoin_ = true;
  }
  return false;
}

void LiveCursor::learn(std::uint64_t end, std::uint64_t oldest, std::uint64_t keyframe) {
  known_end_ = std::max(known_end_, end);
  oldest_ = std::max(oldest_, oldest);
  if (keyframe != proto::kNoKeyframe && (keyframe_ == proto::kNoKeyframe || keyframe > keyframe_)) keyframe_ = keyframe;
  // A keyframe begins a frame too. A coalesced notification tells of a frame start at its own
  // start only, and one that follows lost records (a slow viewer) at none: without this, a viewer
  // that finishes could wait long for a frame boundary it is never told of.
  if (keyframe != proto::kNoKeyframe && started_ && keyframe >= position_) unit_starts_.insert(keyframe);
}

void LiveCursor::on_notify(const proto::LiveNotify& n) {
  const std::uint64_t end = n.stream_offset + n.length;
  learn(end, n.oldest_offset, n.keyframe_offset);
  if (n.flags & proto::kLiveDiscontinuity) discontinuities_.insert(n.stream_offset);
  if ((n.flags & proto::kLiveUnitStart) && (!started_ || n.stream_offset >= position_)) unit_starts_.insert(n.stream_offset);
  if (n.flags & proto::kLiveEndOfStream) end_of_stream_at_ = end;
  // Late join: the server's first notification starts at the newest keyframe.
  if (start_wanted() || wanted_) return;
  if (!started_ && (n.flags & proto::kLiveKeyframe)) start_at(n.stream_offset);
  else if (!started_ && keyframe_ != proto::kNoKeyframe && keyframe_ >= oldest_) start_at(keyframe_);
}

void LiveCursor::on_header(const proto::LiveHeader& h) {
  if (follow_header_) {
    if (stream_id_ && *stream_id_ != h.stream_id && h.keyframe_offset != proto::kNoKeyframe && started_ && h.keyframe_offset > position_)
      discontinuities_.insert(h.keyframe_offset);
    stream_id_ = h.stream_id;
    // The only frame boundaries a header-following viewer learns of are keyframes.
    if (h.keyframe_offset != proto::kNoKeyframe && (!started_ || h.keyframe_offset >= position_)) unit_starts_.insert(h.keyframe_offset);
  }
  learn(follow_header_ ? h.write_offset : 0, h.oldest_offset, h.keyframe_offset);
  if ((h.flags & proto::kLiveHeaderEndOfStream) && (!end_of_stream_at_ || *end_of_stream_at_ < h.write_offset))
    end_of_stream_at_ = h.write_offset;
  // A viewer that follows the header alone starts at the newest keyframe too.
  if (start_wanted() || wanted_) return;
  if (!started_ && keyframe_ != proto::kNoKeyframe && keyframe_ >= oldest_) start_at(keyframe_);
}

std::optional<LiveRange> LiveCursor::next_read(std::uint64_t max_bytes) {
  if (!started_ || max_bytes == 0) return std::nullopt;
  if (position_ < oldest_) {
    // Fell out of the ring: jump to the newest keyframe still in it, or wait for the next one.
    ++stats_.skips;
    if (keyframe_ != proto::kNoKeyframe && keyframe_ >= oldest_) {
      stats_.skipped_bytes += keyframe_ - position_;
      rejoin_ = true;
      start_at(keyframe_);
    } else {
      stats_.skipped_bytes += known_end_ - position_;
      position_ = known_end_;
      started_ = false;
      rejoin_ = true;
      return std::nullopt;
    }
  }
  if (position_ >= known_end_ || finished()) return std::nullopt;
  std::uint64_t end = std::min({known_end_, position_ + max_bytes, position_ + ring_size_});
  // A discontinuity begins a delivery of its own: bytes of two streams or laps never go out as one.
  if (auto d = discontinuities_.upper_bound(position_); d != discontinuities_.end()) end = std::min(end, *d);
  return LiveRange{position_, end};
}

std::uint64_t LiveCursor::deliverable_end(const LiveRange& r) const {
  if (!finishing_) return r.end;
  auto u = unit_starts_.upper_bound(r.begin);
  return u == unit_starts_.end() ? r.end : std::min(r.end, *u);
}

bool LiveCursor::validate(const LiveRange& r, const proto::LiveHeader& header) {
  on_header(header);
  if (header.oldest_offset <= r.begin) return true;
  ++stats_.overwritten;
  return false;
}

LiveCursor::Delivery LiveCursor::deliver(const LiveRange& r) {
  Delivery d;
  d.discontinuity = discontinuities_.count(r.begin) != 0;
  discontinuities_.erase(discontinuities_.begin(), discontinuities_.upper_bound(r.begin));
  unit_starts_.erase(unit_starts_.begin(), unit_starts_.lower_bound(r.end));
  position_ = r.end;
  if (end_of_stream_at_ && *end_of_stream_at_ <= r.end) {
    d.end_of_stream = true;
    end_of_stream_at_.reset();
    ++stats_.end_of_streams;
  }
  return d;
}

bool LiveCursor::take_end_of_stream() {
  if (!end_of_stream_at_ || *end_of_stream_at_ > position_ || !started_) return false;
  end_of_stream_at_.reset();
  ++stats_.end_of_streams;
  return true;
}

}  // namespace vod::client
