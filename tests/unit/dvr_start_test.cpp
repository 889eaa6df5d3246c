// SPDX-License-Identifier: LGPL-2.1-or-later
// Where a DVR viewer starts (plan_dvr_start, a table): the keyframe mark at or before the time
// wanted, behind live or on the wall clock; the window's oldest keyframe for a time a little before
// it; clear refusals for a time after the live edge or long before the window. And --start's UTC
// times (parse_utc_time).
#include <gtest/gtest.h>

#include "vod/client/dvr_source.hpp"

namespace vod::client {
namespace {

using namespace std::chrono_literals;

proto::WindowIndex window() {
  proto::WindowIndex w;
  w.header.end_time_us = 200'000'000;  // the live edge: 200 s
  w.header.end_offset = 100'000;
  for (std::uint64_t k = 0; k < 10; ++k)  // keyframes every 10 s from 100 s, and a non-keyframe discontinuity mark
    w.marks.push_back({k + 1, k * 10'000, 100'000'000 + k * 10'000'000, 0, 1, proto::kWindowMarkKeyframe});
  w.marks.insert(w.marks.begin() + 5, proto::WindowMark{99, 45'000, 145'000'000, 0, 2, proto::kWindowMarkDiscontinuity});
  return w;
}

TEST(DvrStart, Table) {
  struct Row {
    const char* what;
    DvrStart start;
    std::uint64_t offset;
    bool clamped;
  };
  const Row rows[] = {
      {"90 s behind: the keyframe of 110 s", {90s, std::nullopt}, 10'000, false},
      {"95 s behind: the keyframe at or before 105 s", {95s, std::nullopt}, 0, false},
      {"at a wall-clock time", {std::nullopt, 171'000'000}, 70'000, false},
      {"a time between marks skips the non-keyframe mark", {std::nullopt, 149'000'000}, 40'000, false},
      {"the live edge", {0s, std::nullopt}, 90'000, false},
      {"10 s before the window: its oldest keyframe", {110s, std::nullopt}, 0, true},
  };
  for (const auto& r : rows) {
    const auto plan = plan_dvr_start(window(), r.start);
    EXPECT_EQ(plan.offset, r.offset) << r.what;
    EXPECT_EQ(plan.clamped, r.clamped) << r.what;
  }
  const auto refused = [](DvrStart s, const std::string& says) {
    try {
      (void)plan_dvr_start(window(), s);
      ADD_FAILURE() << "accepted: " << says;
    } catch (const ClientError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::out_of_range);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused({std::nullopt, 201'000'000}, "after the live edge");
  refused({200s, std::nullopt}, "before the window");
  refused({std::nullopt, 1'000'000}, "before the window");
  proto::WindowIndex empty;
  empty.header.end_time_us = 5;
  try {
    (void)plan_dvr_start(empty, {1s, std::nullopt});
    ADD_FAILURE() << "a window without a keyframe was accepted";
  } catch (const ClientError& e) {
    EXPECT_NE(std::string(e.what()).find("no keyframe"), std::string::npos);
  }
}

TEST(DvrStart, UtcTimes) {
  EXPECT_EQ(parse_utc_time("2026-11-27T20:00:00Z"), 1'795'809'600'000'000ull);
  EXPECT_EQ(parse_utc_time("2026-11-27T20:00:00.25Z"), 1'795'809'600'250'000ull);
  for (const char* bad : {"", "2026-11-27", "2026-11-27T20:00:00", "2026-11-27T20:00:00+01:00", "2026-13-01T00:00:00Z", "-300",
                          "1969-01-01T00:00:00Z", "2026-11-27T20:00:00.Z"})
    EXPECT_FALSE(parse_utc_time(bad)) << bad;
}

// What --start and rdmasrc's dvr-start read for a live channel (parse_dvr_start).
TEST(DvrStart, StartTexts) {
  EXPECT_FALSE(parse_dvr_start(""));
  EXPECT_FALSE(parse_dvr_start("0"));
  EXPECT_FALSE(parse_dvr_start("-0"));
  EXPECT_EQ(parse_dvr_start("-300")->behind, std::chrono::milliseconds(300'000));
  EXPECT_EQ(parse_dvr_start("-5m")->behind, std::chrono::milliseconds(300'000));
  EXPECT_EQ(parse_dvr_start("-1.5s")->behind, std::chrono::milliseconds(1'500));
  EXPECT_EQ(parse_dvr_start("2026-11-27T20:00:00Z")->at_us, 1'795'809'600'000'000ull);
  for (const char* bad : {"-", "-5x", "--5", "300", "5m", "2026-11-27", "yesterday"}) {
    try {
      (void)parse_dvr_start(bad);
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const ClientError& e) {
      EXPECT_EQ(e.kind(), ErrorKind::usage) << bad;
    }
  }
}

}  // namespace
}  // namespace vod::client
