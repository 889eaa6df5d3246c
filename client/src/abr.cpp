// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/abr.hpp"

#include <algorithm>
#include <stdexcept>

namespace vod::client::abr {

const char* to_string(Why why) noexcept {
  switch (why) {
    case Why::start: return "start";
    case Why::pinned: return "pinned";
    case Why::stay: return "stay";
    case Why::too_slow: return "goodput too low, buffer falling";
    case Why::headroom: return "sustained headroom";
  }
  return "?";
}

namespace {

// The highest rendition whose rate fits `goodput` with the margin; the lowest when none does.
std::size_t fitting(const std::vector<std::uint64_t>& bandwidth, double goodput, double safety) {
  for (std::size_t i = 0; i < bandwidth.size(); ++i)
    if (static_cast<double>(bandwidth[i]) <= safety * goodput) return i;
  return bandwidth.size() - 1;
}

Decision to(std::size_t rendition, Why why, const State& before) {
  Decision d{rendition, why, before};
  d.next.started = true;
  if (!before.started || rendition != before.current) {
    d.next.since_switch = 0;
    d.next.headroom_streak = 0;
  } else {
    ++d.next.since_switch;
  }
  d.next.current = rendition;
  return d;
}

}  // namespace

Decision decide(const std::vector<std::uint64_t>& bandwidth, const State& state, const Observation& seen, const Settings& s,
                std::optional<std::size_t> pinned) {
  if (bandwidth.empty()) throw std::invalid_argument("abr::decide: a title has at least one rendition");
  if (pinned) return to(std::min(*pinned, bandwidth.size() - 1), Why::pinned, state);
  const bool measured = seen.goodput_bps > 0;
  if (!state.started) return to(measured ? fitting(bandwidth, seen.goodput_bps, s.safety) : bandwidth.size() - 1, Why::start, state);
  const std::size_t current = std::min(state.current, bandwidth.size() - 1);
  if (measured && seen.buffer_s<s.low_buffer_s&& static_cast<double>(bandwidth[current])> s.safety * seen.goodput_bps) {
    const std::size_t down = fitting(bandwidth, seen.goodput_bps, s.safety);
    if (down > current) return to(down, Why::too_slow, state);
  }
  Decision d = to(current, Why::stay, state);
  const bool headroom = measured && current > 0 && seen.buffer_s >= s.high_buffer_s &&
                        seen.goodput_bps >= s.up_factor * static_cast<double>(bandwidth[current - 1]);
  d.next.headroom_streak = headroom ? state.headroom_streak + 1 : 0;
  if (headroom && d.next.headroom_streak >= s.up_after && state.since_switch >= s.dwell) return to(current - 1, Why::headroom, state);
  return d;
}

}  // namespace vod::client::abr
