// SPDX-License-Identifier: LGPL-2.1-or-later
// The rendition decider of adaptive bitrate over one-sided Reads (client/abr.hpp), as tables: a
// title of 4, 2, 1 and 0.5 Mbit/s, and runs of observations with the renditions chosen.
#include <gtest/gtest.h>

#include "vod/client/abr.hpp"

namespace vod::client::abr {
namespace {

const std::vector<std::uint64_t> kLadder{4'000'000, 2'000'000, 1'000'000, 500'000};

struct Step {
  double goodput_mbps, buffer_s;
  std::size_t want;
  Why why;
};

// Runs `steps` from `state`; each decision must choose `want` for `why`. Returns the last state.
State run(const std::vector<Step>& steps, State state = {}, const Settings& s = {}) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Decision d = decide(kLadder, state, {steps[i].goodput_mbps * 1e6, steps[i].buffer_s}, s);
    EXPECT_EQ(d.rendition, steps[i].want) << "step " << i << ": " << steps[i].goodput_mbps << " Mbit/s, " << steps[i].buffer_s << " s held";
    EXPECT_EQ(d.why, steps[i].why) << "step " << i << ": " << to_string(d.why);
    state = d.next;
  }
  return state;
}

TEST(Abr, StartsAtWhatFitsTheMeasuredGoodputOrTheLowest) {
  run({{0, 0, 3, Why::start}});    // nothing measured: the lowest
  run({{10, 0, 0, Why::start}});   // 0.8 x 10 >= 4: the top
  run({{3, 0, 1, Why::start}});    // 0.8 x 3 = 2.4: 2 Mbit/s
  run({{1.2, 0, 3, Why::start}});  // 0.96: only 0.5 fits
  run({{0.1, 0, 3, Why::start}});  // nothing fits: the lowest
}

TEST(Abr, StepsDownAtOnceOnAFallingBufferAsFarAsNeeded) {
  run({{10, 0, 0, Why::start},
       {10, 12, 0, Why::stay},
       {3, 11, 0, Why::stay},         // 4 Mbit/s does not fit 0.8 x 3, but 11 s are held: a dip is ridden out
       {2.2, 9.5, 2, Why::too_slow},  // the buffer falls: 0.8 x 2.2 = 1.76, two rungs down at once
       {2.2, 3.0, 2, Why::stay},
       {2.2, 6, 2, Why::stay}});
  // Reads far behind: from the top to the lowest in one decision.
  run({{10, 0, 0, Why::start}, {0.3, 2, 3, Why::too_slow}});
}

TEST(Abr, ALowBufferWithAFittingRenditionStays) {
  // The buffer is low (a start, a seek), but the rendition fits the goodput: no step down.
  run({{3, 0, 1, Why::start}, {3, 1, 1, Why::stay}, {3, 2, 1, Why::stay}});
}

TEST(Abr, StepsUpOneRenditionOnlyAfterSustainedHeadroom) {
  State s = run({{1.2, 0, 3, Why::start}, {1.2, 9, 3, Why::stay}});
  // 1.4 Mbit/s: 1.3 x 1 = 1.3 is headroom over 1 Mbit/s; three decisions in a row (and the dwell).
  s = run({{1.4, 9, 3, Why::stay}, {1.4, 9, 3, Why::stay}, {1.4, 9, 2, Why::headroom}}, s);
  // A much faster link still goes up one rendition at a time, each after its own streak.
  s = run({{20, 10, 2, Why::stay},
           {20, 10, 2, Why::stay},
           {20, 10, 1, Why::headroom},
           {20, 10, 1, Why::stay},
           {20, 10, 1, Why::stay},
           {20, 10, 0, Why::headroom},
           {20, 10, 0, Why::stay}},
          s);
  EXPECT_EQ(s.current, 0u);
}

TEST(Abr, HeadroomThatIsNotSustainedOrWithoutABufferDoesNotStepUp) {
  State s = run({{1.2, 0, 3, Why::start}, {1.2, 9, 3, Why::stay}});
  s = run({{1.4, 9, 3, Why::stay},
           {1.4, 9, 3, Why::stay},
           {1.2, 9, 3, Why::stay},  // the streak breaks
           {1.4, 9, 3, Why::stay},
           {1.4, 9, 3, Why::stay},
           {1.4, 5, 3, Why::stay}},  // the buffer is not full
          s);
  EXPECT_EQ(s.headroom_streak, 0u);
}

TEST(Abr, ASteadyLinkBetweenTwoRenditionsDoesNotOscillate) {
  // 2.2 Mbit/s: 2 Mbit/s does not fit (0.8 x 2.2 = 1.76) yet has no headroom to go up either: 1 Mbit/s
  // is chosen, and kept for a hundred decisions, whatever the buffer does.
  State s = run({{2.2, 0, 2, Why::start}});
  for (int i = 0; i < 100; ++i) {
    const Decision d = decide(kLadder, s, {2.2e6, i % 2 ? 3.0 : 12.0}, {});
    ASSERT_EQ(d.rendition, 2u) << "decision " << i;
    s = d.next;
  }
}

TEST(Abr, NoStepUpRightAfterAStepDown) {
  // A dip then a burst: the dwell keeps it down for two decisions even with headroom.
  Settings settings;
  settings.up_after = 1;
  State s = run({{10, 0, 0, Why::start}, {1.5, 2, 2, Why::too_slow}}, {}, settings);
  s = run({{10, 10, 2, Why::stay}, {10, 10, 2, Why::stay}, {10, 10, 1, Why::headroom}}, s, settings);
}

TEST(Abr, APinnedRenditionIsKeptWhateverIsMeasured) {
  State s;
  for (double goodput : {0.0, 0.1, 100.0}) {
    const Decision d = decide(kLadder, s, {goodput * 1e6, 0.5}, {}, 0);
    EXPECT_EQ(d.rendition, 0u);
    EXPECT_EQ(d.why, Why::pinned);
    s = d.next;
  }
  EXPECT_EQ(decide(kLadder, s, {1e6, 1}, {}, 9).rendition, 3u);  // past the end: the last
}

TEST(Abr, OneRenditionAndAnEmptyLadder) {
  const Decision d = decide({1'000'000}, {}, {0.1e6, 0}, {});
  EXPECT_EQ(d.rendition, 0u);
  EXPECT_EQ(decide({1'000'000}, d.next, {0.1e6, 0}, {}).rendition, 0u);
  EXPECT_THROW(decide({}, {}, {}, {}), std::invalid_argument);
}

}  // namespace
}  // namespace vod::client::abr
