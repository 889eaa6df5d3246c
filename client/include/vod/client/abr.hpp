// SPDX-License-Identifier: LGPL-2.1-or-later
// Adaptive bitrate over one-sided Reads: which rendition of a title a viewer reads next. The rule
// is a pure function of the title's renditions, the viewer's state and what it has measured (its
// Reads' goodput and the media it holds ahead of playback), decided at each aligned keyframe (a
// segment boundary of the title), where a switch is only a change of the next Read's target.
// It is throughput-based with buffer thresholds, as dash.js's and ExoPlayer's default rules are:
//  - start: the highest rendition whose rate fits the measured goodput with a safety margin, or the
//    lowest when nothing is measured yet;
//  - step down, at once and as far as needed, when the rendition does not fit the goodput and the
//    buffer has begun to fall (ExoPlayer's rule: a player holding most of its buffer rides out a
//    dip; one whose reads fall behind playback does not wait for the buffer to run dry);
//  - step up one rendition at a time, only after the goodput had headroom over the next rendition
//    for several decisions in a row with a full buffer, and not right after a switch;
//  - otherwise stay: a steady link does not oscillate.
// tests/unit/abr_test.cpp is its table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vod::client::abr {

struct Settings {
  double safety = 0.8;     // a rendition fits when its bandwidth <= safety x goodput
  double up_factor = 1.3;  // headroom: goodput >= up_factor x the next rendition's bandwidth ...
  unsigned up_after = 3;   // ... at this many decisions in a row
  unsigned dwell = 2;      // decisions after a switch before any step up
  // Below: a rendition that does not fit is left for one that does. TitleReader holds at most 12 s
  // and, while its reads keep up, never less than 10: one read slower than its media takes it below.
  double low_buffer_s = 10.0;
  double high_buffer_s = 8.0;  // a step up needs at least this much held
  bool operator==(const Settings&) const = default;
};

struct State {
  bool started = false;
  std::size_t current = 0;       // index into the renditions, highest bandwidth first
  unsigned headroom_streak = 0;  // decisions in a row with headroom for the next rendition up
  unsigned since_switch = 0;     // decisions since the last switch (or the start)
  bool operator==(const State&) const = default;
};

struct Observation {
  double goodput_bps = 0;  // the Reads' recent goodput; 0: not measured yet
  double buffer_s = 0;     // media held ahead of playback, in seconds
};

enum class Why { start, pinned, stay, too_slow, headroom };
const char* to_string(Why why) noexcept;

struct Decision {
  std::size_t rendition = 0;  // read this one next
  Why why = Why::stay;
  State next;  // the state to pass to the next decision
  bool switched(const State& before) const noexcept { return before.started && rendition != before.current; }
};

// `bandwidth_bps`: each rendition's rate, highest first (a title's order); not empty. `pinned`:
// a rendition chosen by the viewer (--rendition), kept whatever is measured.
Decision decide(const std::vector<std::uint64_t>& bandwidth_bps, const State& state, const Observation& seen, const Settings& settings,
                std::optional<std::size_t> pinned = std::nullopt);

}  // namespace vod::client::abr
