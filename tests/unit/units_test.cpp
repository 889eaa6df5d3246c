// SPDX-License-Identifier: LGPL-2.1-or-later
// Durations and sizes in options (vod/units.hpp): what is read, what is refused and how it is named.
#include <gtest/gtest.h>

#include "vod/units.hpp"

namespace vod {
namespace {

using std::chrono::milliseconds;

TEST(Units, Durations) {
  const std::pair<const char*, std::int64_t> good[] = {
      {"90s", 90'000},
      {"3m", 180'000},
      {"2h", 7'200'000},
      {"1d", 86'400'000},
      {"90", 90'000},
      {"0.5", 500},
      {"1.5h", 5'400'000},
      {"250ms", 250},
      {"0", 0},
      {"10min", 600'000},
      {"36500d", 3'153'600'000'000},
  };
  for (const auto& [text, ms] : good) EXPECT_EQ(parse_duration(text, "--x"), milliseconds(ms)) << text;
  for (const char* bad : {"", "s", "-5s", "+5s", "5 s", "5w", "1e3", "inf", "nan", ".", "1..2", "36501d", "5sec"}) {
    try {
      (void)parse_duration(bad, "--live-dvr");
      ADD_FAILURE() << "'" << bad << "' was read";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--live-dvr: '" + std::string(bad) + "' ", 0), 0u) << e.what();
    }
  }
}

TEST(Units, Sizes) {
  EXPECT_EQ(parse_size("512M", "--x"), 512ull << 20);
  EXPECT_EQ(parse_size("4G", "--x"), 4ull << 30);
  EXPECT_EQ(parse_size("1TiB", "--x"), 1ull << 40);
  EXPECT_EQ(parse_size("64k", "--x"), 64ull << 10);
  EXPECT_EQ(parse_size("65536", "--x"), 65536u);
  for (const char* bad : {"", "G", "-1G", "4X", "99999999999999999999", "20000000T", "1.5G"})
    EXPECT_THROW((void)parse_size(bad, "--x"), std::invalid_argument) << bad;
}

TEST(Units, FormatDuration) {
  EXPECT_EQ(format_duration(milliseconds(7'200'000)), "2h");
  EXPECT_EQ(format_duration(milliseconds(180'000)), "3m");
  EXPECT_EQ(format_duration(milliseconds(90'000)), "90s");
  EXPECT_EQ(format_duration(milliseconds(1'500)), "1.5s");
  EXPECT_EQ(format_duration(milliseconds(250)), "250ms");
  EXPECT_EQ(format_duration(milliseconds(0)), "0s");
}

}  // namespace
}  // namespace vod
