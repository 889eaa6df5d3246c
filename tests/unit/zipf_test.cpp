// SPDX-License-Identifier: LGPL-2.1-or-later
// Zipf's law as the benchmarks draw movies with it (vod/zipf.hpp).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "vod/zipf.hpp"

namespace vod {
namespace {

TEST(Zipf, RanksFollowTheLawAndStayInRange) {
  EXPECT_EQ(zipf_rank(1, 1.0, 0.99), 0u);
  EXPECT_EQ(zipf_rank(4, 0.0, 0.0), 0u);
  EXPECT_EQ(zipf_rank(4, 0.0, 0.26), 1u) << "exponent 0: uniform, a quarter each";
  EXPECT_EQ(zipf_rank(4, 0.0, 0.9999), 3u);
  EXPECT_EQ(zipf_rank(40, 1.0, 0.0), 0u);
  EXPECT_EQ(zipf_rank(40, 1.0, 0.999999), 39u);
  std::mt19937_64 g(7);
  std::vector<int> counts(40);
  for (int i = 0; i < 100000; ++i) ++counts.at(zipf_rank(40, 1.0, std::uniform_real_distribution<double>(0, 1)(g)));
  // P(rank 0) = 1 / H(40) = 0.234; rank 1 half of that, rank 9 a tenth.
  EXPECT_NEAR(counts[0] / 100000.0, 0.234, 0.01);
  EXPECT_NEAR(static_cast<double>(counts[1]) / counts[0], 0.5, 0.05);
  EXPECT_NEAR(static_cast<double>(counts[9]) / counts[0], 0.1, 0.02);
}

}  // namespace
}  // namespace vod
