// SPDX-License-Identifier: LGPL-2.1-or-later
// What a live viewer decides, without any I/O: where it starts (the newest keyframe), which stream
// bytes to read next, whether bytes it read were overwritten meanwhile, when it has fallen out of
// the ring and must skip to a keyframe, and which delivered bytes begin after a discontinuity or
// end a stream. LiveSession feeds it notifications and header snapshots and does what it says.
//
// The validity rule: bytes [b, e) read from the ring, followed on the same QP by a read of the live
// header, are valid when that header's oldest offset is ≤ b. The server publishes a new oldest
// offset before it overwrites a byte, and the responder executes the two Reads in order, so a
// header that still lists b as valid was read after the bytes were, and before any of them changed.
#pragma once

#include <cstdint>
#include <optional>
#include <set>

#include "vod/protocol/live_messages.hpp"

namespace vod::client {

struct LiveRange {
  std::uint64_t begin = 0, end = 0;
  std::uint64_t size() const noexcept { return end - begin; }
  bool operator==(const LiveRange&) const = default;
};

struct LiveCursorStats {
  std::uint64_t skips = 0;  // times the viewer fell out of the ring and jumped to a keyframe
  std::uint64_t skipped_bytes = 0;
  std::uint64_t overwritten = 0;  // reads discarded because the source overwrote them meanwhile
  std::uint64_t end_of_streams = 0;
};

class LiveCursor {
 public:
  // With notifications (follow_header false), only notifications say how far the stream was
  // published: a header read after a batch may already list records whose notification, with its
  // discontinuity flag, has not arrived. A viewer that follows the header alone learns the end
  // from it, and puts a discontinuity at the new stream's keyframe when the stream id changes.
  LiveCursor(std::uint64_t ring_size, bool follow_header) : ring_size_(ring_size), follow_header_(follow_header) {}

  // The viewer starts again after a lost connection: its first bytes begin a discontinuity.
  void mark_rejoin() noexcept { rejoin_ = true; }
  // Start at `offset` instead of the newest keyframe (a viewer that comes from the channel's DVR
  // window, where it read up to there), when the ring still holds it; else at the newest keyframe,
  // with a discontinuity.
  void start_from(std::uint64_t offset) noexcept { wanted_ = offset; }

  void on_notify(const proto::LiveNotify& n);
  void on_header(const proto::LiveHeader& h);

  bool started() const noexcept { return started_; }
  std::uint64_t position() const noexcept { return position_; }
  std::uint64_t known_end() const noexcept { return known_end_; }

  // The next bytes to read, at most `max_bytes` (and never across a discontinuity), or nullopt
  // when nothing new is known. Skips first when the position fell out of the ring.
  std::optional<LiveRange> next_read(std::uint64_t max_bytes);
  // `header` was read after the bytes of `r`: true when they are valid. When they are not, the
  // next next_read() skips to a keyframe.
  bool validate(const LiveRange& r, const proto::LiveHeader& header);

  struct Delivery {
    bool discontinuity = false;  // these bytes follow a skip, a restart or a loop: reset decoders
    bool end_of_stream = false;  // the source stopped after these bytes
  };
  // The bytes of `r` (valid, starting at the position) are handed to the caller.
  Delivery deliver(const LiveRange& r);
  // An end of stream at the position with no bytes before it: reported once.
  bool take_end_of_stream();

  // Stop cleanly: deliver up to the next access-unit start (a frame boundary of the main stream, as
  // the notifications tell), then finished() turns true, so a recording ends on a whole frame.
  void finish() noexcept { finishing_ = true; }
  bool finished() const noexcept { return finishing_ && started_ && unit_starts_.count(position_) != 0; }
  // The end of what may be delivered from `r` now: all of it, or up to a unit start when finishing.
  std::uint64_t deliverable_end(const LiveRange& r) const;

  const LiveCursorStats& stats() const noexcept { return stats_; }

 private:
  void start_at(std::uint64_t offset);
  // Starts at the wanted offset once the ring is known to hold it; true when it did.
  bool start_wanted();
  void learn(std::uint64_t end, std::uint64_t oldest, std::uint64_t keyframe);

  std::uint64_t ring_size_;
  bool follow_header_;
  std::optional<std::uint32_t> stream_id_;  // followed from the header
  bool started_ = false;
  bool rejoin_ = false;                  // the next start follows a skip: it begins a discontinuity
  std::optional<std::uint64_t> wanted_;  // start_from()
  std::uint64_t position_ = 0;
  std::uint64_t known_end_ = 0;
  std::uint64_t oldest_ = 0;
  std::uint64_t keyframe_ = proto::kNoKeyframe;
  std::optional<std::uint64_t> end_of_stream_at_;
  std::set<std::uint64_t> discontinuities_;  // stream offsets where one begins, at or after the position
  std::set<std::uint64_t> unit_starts_;      // where access units begin, at or after the position
  bool finishing_ = false;
  LiveCursorStats stats_;
};

}  // namespace vod::client
