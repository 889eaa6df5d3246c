// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "vod/media/ladder.hpp"

namespace vod::media {
namespace {

TEST(Ladder, PlanKeepsTheAspectAndNeverUpscales) {
  struct Case {
    std::vector<std::string> labels;
    unsigned w, h;
    std::vector<Rung> want;
  };
  const std::vector<Case> cases = {
      {{"1080p", "720p", "480p", "360p"},
       1920,
       1080,
       {{"1080p", 1920, 1080, 5000}, {"720p", 1280, 720, 2722}, {"480p", 854, 480, 1482}, {"360p", 640, 360, 962}}},
      {{"360p", "1080p", "720p"}, 1280, 720, {{"720p", 1280, 720, 2722}, {"360p", 640, 360, 962}}},  // sorted, 1080p left out
      {{"480p"}, 1440, 1080, {{"480p", 640, 480, 1194}}},                                            // 4:3
      {{"240p"}, 320, 240, {{"240p", 320, 240, 422}}},
  };
  for (const Case& c : cases) EXPECT_EQ(plan_ladder(c.labels, c.w, c.h), c.want) << c.labels[0];
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"720"}, {"p"}, {"99p"}, {"9000p"}, {"hd"}, {"720p", "720p"}, {"2160p"}})
    EXPECT_THROW(plan_ladder(bad, 1920, 1080), std::invalid_argument) << bad[0];
  EXPECT_THROW(plan_ladder({"720p"}, 0, 0), std::invalid_argument);
}

TEST(Ladder, OneDecodeSplitToEveryRenditionWithForcedKeyframes) {
  LadderJob job{"in put.mkv", "out/Films/X", "X", plan_ladder({"720p", "360p"}, 1280, 720), 2.0, true, false};
  const auto a = ladder_command(job);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a[0], "ffmpeg");
  const auto count = [&](const std::string& s) { return std::count(a.begin(), a.end(), s); };
  EXPECT_EQ(count("-i"), 1);  // one decode
  EXPECT_EQ(count("in put.mkv"), 1);
  EXPECT_EQ(count("-force_key_frames"), 2);
  EXPECT_EQ(count("expr:gte(t,n_forced*2)"), 2);
  EXPECT_EQ(count("scenecut=0:open_gop=0:keyint=infinite"), 2);
  EXPECT_EQ(count("0:a"), 2);   // every audio stream in each
  EXPECT_EQ(count("0:s?"), 0);  // no text subtitles in the source
  EXPECT_EQ(count("out/Films/X/X - 720p.mp4"), 1);
  EXPECT_EQ(count("out/Films/X/X - 360p.mp4"), 1);
  const auto graph = std::find(a.begin(), a.end(), "-filter_complex");
  ASSERT_NE(graph, a.end());
  EXPECT_EQ(graph[1], "[0:v:0]split=2[s0][s1];[s0]scale=1280:720,setsar=1[v0];[s1]scale=640:360,setsar=1[v1]");
}

}  // namespace
}  // namespace vod::media
