// SPDX-License-Identifier: LGPL-2.1-or-later
// The recent bytes of one live channel, shared by all of the proxy's viewers of it: a bounded queue
// of FanoutChunks (LiveChunker cut them), newest last, and each viewer's read position. No I/O, so
// it is table-tested on its own (tests/unit/proxy_live_fanout_test.cpp).
//
// The channel's session appends at the speed the server publishes, whatever the viewers do; the
// oldest chunks go when the backlog holds more than its capacity. A viewer takes the chunk at its
// position; a new viewer starts at the newest join point (a keyframe); a viewer whose position
// was dropped (it read slower than the channel plays, for longer than the backlog lasts) jumps to
// the newest join point too, and that jump is a discontinuity: the bytes skipped are counted and
// logged. A viewer never slows the session or another viewer; one that is writing a dropped chunk
// keeps only that chunk alive (a shared_ptr), not the backlog.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>

#include "live_chunker.hpp"

namespace vod::proxy {

// Where one viewer is.
struct ViewerCursor {
  bool started = false;        // false: a new viewer; next() places it at the newest join point
  std::uint64_t position = 0;  // the offset of the next chunk it sends
};

// What a viewer sends next.
struct BacklogStep {
  FanoutChunkPtr chunk;             // null: nothing new yet (wait for the next append)
  bool discontinuity = false;       // the viewer fell out of the backlog and jumped to `chunk`
  std::uint64_t skipped_bytes = 0;  // ... over this many bytes
};

class LiveBacklog {
 public:
  explicit LiveBacklog(std::size_t capacity_bytes) : capacity_(capacity_bytes) {}

  // The next chunk; its offset is end(). Drops the oldest chunks while more than the capacity is
  // held (the newest one always stays).
  void append(FanoutChunkPtr chunk);
  // The chunk for `viewer`, whose position moves past it.
  BacklogStep next(ViewerCursor& viewer) const;

  bool empty() const noexcept { return chunks_.empty(); }
  std::uint64_t begin() const noexcept { return chunks_.empty() ? end_ : chunks_.front()->offset; }
  std::uint64_t end() const noexcept { return end_; }
  std::size_t bytes() const noexcept { return bytes_; }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  const FanoutChunkPtr& newest_join_point() const;  // or the oldest chunk, when none is held

  std::size_t capacity_;
  std::deque<FanoutChunkPtr> chunks_;
  std::size_t bytes_ = 0;
  std::uint64_t end_ = 0;
};

}  // namespace vod::proxy
