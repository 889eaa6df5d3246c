// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/window_bounds.hpp"

namespace vod::server::live {

std::uint64_t byte_floor(const WindowLimits& limits, std::uint64_t claim) noexcept {
  if (claim == 0) return 0;
  const std::uint64_t last = (claim - 1) / limits.segment_size;  // the newest segment the writer has touched
  return last + 1 > limits.segments ? (last + 1 - limits.segments) * limits.segment_size : 0;
}

std::uint64_t time_floor(const WindowLimits& limits, std::uint64_t newest_time_us) noexcept {
  return newest_time_us > limits.duration_us ? newest_time_us - limits.duration_us : 0;
}

std::uint64_t window_oldest(const WindowLimits& limits, std::uint64_t claim, std::uint64_t newest_time_us,
                            const std::deque<WindowPoint>& marks) noexcept {
  const std::uint64_t floor = byte_floor(limits, claim);
  const std::uint64_t since = time_floor(limits, newest_time_us);
  for (const auto& m : marks)
    if (m.keyframe && m.offset >= floor && m.offset < claim && m.time_us >= since) return m.offset;
  return claim;
}

}  // namespace vod::server::live
