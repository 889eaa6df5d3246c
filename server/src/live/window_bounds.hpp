// SPDX-License-Identifier: LGPL-2.1-or-later
// What a live channel's DVR window holds (vod-server --live-dvr): a pure decider, table-tested
// (tests/unit/dvr_window_test.cpp). The window is bounded twice:
//   - in bytes: N chunks of S bytes on disk. Writing into the chunk of segment c destroys segment
//     c - N, so the oldest byte still there is the start of segment c - N + 1, for the last chunk
//     the writer has claimed (it claims a record's bytes before it writes them);
//   - in time: the last `duration` before the newest record's publish time (not the clock's now:
//     a source that stopped leaves its last minutes to rewind).
// It begins at a keyframe, where a viewer can start decoding, no older than either bound and no
// older than the oldest keyframe mark still held.
#pragma once

#include <cstdint>
#include <deque>

namespace vod::server::live {

struct WindowPoint {
  std::uint64_t offset = 0;
  std::uint64_t time_us = 0;  // publish time
  bool keyframe = false;
};

struct WindowLimits {
  std::uint32_t segment_size = 0;  // S
  std::uint32_t segments = 0;      // N
  std::uint64_t duration_us = 0;
};

// The oldest offset byte bound alone, for the claimed end `claim`.
std::uint64_t byte_floor(const WindowLimits& limits, std::uint64_t claim) noexcept;

// The oldest publish time the time bound keeps, for the newest record's `newest_time_us`.
std::uint64_t time_floor(const WindowLimits& limits, std::uint64_t newest_time_us) noexcept;

// The window's first offset: the oldest keyframe mark within both bounds; `claim` when there is
// none (an empty window). `marks` are oldest first.
std::uint64_t window_oldest(const WindowLimits& limits, std::uint64_t claim, std::uint64_t newest_time_us,
                            const std::deque<WindowPoint>& marks) noexcept;

}  // namespace vod::server::live
