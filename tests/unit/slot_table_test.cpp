// SPDX-License-Identifier: LGPL-2.1-or-later
// The segment cache's slot decider as a table: least recently requested first, grace, quarantine
// longer than a client's Read deadline, and the reserve evicted ahead.
#include <gtest/gtest.h>

#include "cache/slot_table.hpp"

namespace vod::server::cache {
namespace {

using namespace std::chrono_literals;
using State = SlotTable::State;

const Clock::time_point t0{};

TEST(SlotTable, FillsFreeSlotsThenEvictsTheLeastRecentlyRequested) {
  SlotTable t(3, 2s, 5s, 0);
  for (std::uint32_t i = 0; i < 3; ++i) {
    ASSERT_EQ(t.take({1, i}, t0), i);
    t.filled(i, t0 + std::chrono::seconds(i));
  }
  EXPECT_EQ(t.take({1, 9}, t0 + 10s), std::nullopt);
  t.touch(0, t0 + 9s);  // segment 0 asked for again: now the most recent
  const auto ev = t.plan_evictions(t0 + 10s, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0], (SlotTable::Eviction{1, {1, 1}}));
  EXPECT_EQ(t.state(1), State::quarantined);
  EXPECT_EQ(t.take({1, 9}, t0 + 14s), std::nullopt) << "still in quarantine";
  EXPECT_EQ(t.next_change(t0 + 14s), t0 + 15s);
  EXPECT_EQ(t.take({1, 9}, t0 + 15s), 1u);
  EXPECT_EQ(t.state(1), State::filling);
  EXPECT_EQ(t.key(1), (SegmentKey{1, 9}));
}

TEST(SlotTable, NeverEvictsWithinGrace) {
  SlotTable t(2, 2s, 1s, 0);
  ASSERT_EQ(t.take({1, 0}, t0), 0u);
  t.filled(0, t0);
  ASSERT_EQ(t.take({1, 1}, t0), 1u);
  t.filled(1, t0 + 1s);
  EXPECT_TRUE(t.plan_evictions(t0 + 1500ms, 1).empty()) << "both asked for within 2 s";
  EXPECT_EQ(t.next_change(t0 + 1500ms), t0 + 2s);
  const auto ev = t.plan_evictions(t0 + 2s, 1);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].slot, 0u);
  t.touch(1, t0 + 2900ms);
  EXPECT_TRUE(t.plan_evictions(t0 + 3500ms, 2).empty()) << "slot 1 was asked for 0.6 s ago";
}

TEST(SlotTable, KeepsTheReserveByEvictingAhead) {
  SlotTable t(4, 0s, 1s, 2);
  for (std::uint32_t i = 0; i < 4; ++i) {
    ASSERT_TRUE(t.take({2, i}, t0).has_value());
    t.filled(i, t0 + std::chrono::milliseconds(i));
  }
  const auto ev = t.plan_evictions(t0 + 1s, 0);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].slot, 0u);
  EXPECT_EQ(ev[1].slot, 1u);
  EXPECT_TRUE(t.plan_evictions(t0 + 1s, 0).empty()) << "two quarantined slots are the reserve";
  EXPECT_EQ(t.count(State::quarantined), 2u);
  EXPECT_EQ(t.count(State::resident), 2u);
}

TEST(SlotTable, FillingSlotsAreNeitherEvictedNorTakenAndFailuresFreeThem) {
  SlotTable t(1, 0s, 1s, 0);
  ASSERT_EQ(t.take({1, 0}, t0), 0u);
  EXPECT_TRUE(t.plan_evictions(t0 + 10s, 1).empty());
  EXPECT_EQ(t.evict(0, t0), std::nullopt);
  t.fill_failed(0);
  EXPECT_EQ(t.state(0), State::free);
  EXPECT_THROW(t.filled(0, t0), std::logic_error);
}

TEST(SlotTable, ATestHookEvictsWhateverItsGrace) {
  SlotTable t(1, 60s, 1s, 0);
  ASSERT_EQ(t.take({3, 4}, t0), 0u);
  t.filled(0, t0);
  const auto e = t.evict(0, t0 + 1ms);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->key, (SegmentKey{3, 4}));
  EXPECT_EQ(t.take({3, 5}, t0 + 500ms), std::nullopt);
  EXPECT_EQ(t.take({3, 5}, t0 + 1001ms), 0u);
}

}  // namespace
}  // namespace vod::server::cache
