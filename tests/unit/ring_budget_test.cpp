// SPDX-License-Identifier: LGPL-2.1-or-later
// fit_rings: many sessions' rings sized to the memory there is (issue 29, item 7: a 1000-viewer
// bench with default rings was killed by the OOM killer in a 4 GiB guest).
#include <gtest/gtest.h>

#include "vod/client/read_engine.hpp"

namespace vod::client {
namespace {

constexpr std::uint64_t kMiB = 1 << 20;

TEST(RingBudget, TheDefaultRingIsDepthPlusReadAheadPlusTwoChunks) {
  const EngineOptions o;  // 256 KiB chunks, depth 16, 4 MiB read-ahead
  EXPECT_EQ(ring_bytes_for(o), (16 + 16 + 2) * 256 * 1024u);
}

TEST(RingBudget, FitsByLessReadAheadThenLessDepthOrRefuses) {
  const EngineOptions o;
  struct Row {
    std::size_t sessions;
    std::uint64_t budget;
    bool fits;
    std::size_t readahead;
    unsigned depth;
  };
  const Row rows[] = {
      {10, 1024 * kMiB, true, 4 * kMiB, 16},  // room for all: unchanged (8.5 MiB each)
      {1000, 100000 * kMiB, true, 4 * kMiB, 16},
      {1000, 7000 * kMiB, true, 2 * kMiB, 16},       // 6.5 MiB each
      {1000, 5000 * kMiB, true, 512 * 1024, 16},     // 5 MiB each
      {1000, 3 * 1024 * kMiB, true, 256 * 1024, 8},  // the 4 GiB guest: read-ahead one chunk, depth 8 (2.75 MiB each)
      {1000, 1800 * kMiB, true, 256 * 1024, 4},      // 1.75 MiB each
      {1000, 1300 * kMiB, true, 256 * 1024, 2},      // 1.25 MiB each: the least
      {1000, 1200 * kMiB, false, 0, 0},
      {1, 1 * kMiB, false, 0, 0},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(::testing::Message() << r.sessions << " sessions in " << r.budget / kMiB << " MiB");
    const auto fitted = fit_rings(o, r.sessions, r.budget);
    ASSERT_EQ(fitted.has_value(), r.fits);
    if (!fitted) continue;
    EXPECT_EQ(fitted->readahead_bytes, r.readahead);
    EXPECT_EQ(fitted->read_depth, r.depth);
    EXPECT_LE(ring_bytes_for(*fitted) * r.sessions, r.budget);
    EXPECT_LE(fitted->readahead_depth, fitted->read_depth);
  }
}

}  // namespace
}  // namespace vod::client
