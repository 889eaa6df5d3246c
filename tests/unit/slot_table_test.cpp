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

// With no grace, a slot just filled is still not taken to keep the reserve before its requester
// could read it (else a sender refaults the same segment again and again); a waiting fault may take
// it, the least recently requested first.
TEST(SlotTable, TheReserveNeverTakesASlotJustFilled) {
  SlotTable t(3, 0s, 1s, 1);
  for (std::uint32_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(t.take({3, i}, t0).has_value());
    t.filled(i, t0 + std::chrono::milliseconds(10 * i));
  }
  EXPECT_TRUE(t.plan_evictions(t0 + 100ms, 0).empty()) << "all three were filled within the hold";
  EXPECT_EQ(t.next_change(t0 + 100ms), t0 + SlotTable::kFillHold);
  const auto for_fault = t.plan_evictions(t0 + 100ms, 1);
  ASSERT_EQ(for_fault.size(), 1u) << "a fault that waits may take one";
  EXPECT_EQ(for_fault[0].slot, 0u);
  const auto later = t.plan_evictions(t0 + SlotTable::kFillHold + 10ms, 0);
  EXPECT_TRUE(later.empty()) << "the quarantined slot is the reserve";
  EXPECT_EQ(t.count(State::quarantined), 1u);
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

TEST(SlotTable, ProtectedShareIsAnEqualPartOfWhatIsNotReserved) {
  struct Row {
    std::uint32_t slots, reserve, active, share;
  };
  const Row rows[] = {
      {8, 1, 1, 7}, {8, 1, 2, 3}, {8, 1, 7, 1}, {8, 1, 100, 1},  // never 0: one slot at least
      {2, 1, 1, 1}, {1, 1, 1, 1}, {1, 0, 1, 1}, {1000, 64, 0, 936}, {1000, 64, 5, 187}, {1000, 64, 1000, 1},
  };
  for (const Row& r : rows)
    EXPECT_EQ(protected_share(r.slots, r.reserve, r.active), r.share)
        << r.slots << " slots, " << r.reserve << " reserved, " << r.active << " active";
  // All of them together never protect every slot beyond the reserve.
  for (std::uint32_t slots : {2u, 8u, 64u, 1000u})
    for (std::uint32_t active = 1; active <= 2 * slots; ++active) {
      const std::uint32_t reserve = std::max<std::uint32_t>(1, slots / 8);
      const std::uint32_t share = protected_share(slots, reserve, active);
      if (share > 1) {
        EXPECT_LE(std::uint64_t{share} * active, slots - reserve) << slots << " slots, " << active << " active";
      }
    }
}

TEST(SlotTable, OnePeerThatTouchesEverySlotProtectsOnlyItsShare) {
  // 8 slots, 1 reserved. An attacker (requester 66) asks for every resident segment every 100 ms;
  // an honest viewer (requester 7) faults: the attacker's grace keeps only its share, and the
  // honest fault finds slots.
  SlotTable t(8, 2s, 1s, 1);
  for (std::uint32_t i = 0; i < 8; ++i) {
    ASSERT_EQ(t.take({1, i}, t0), i);
    t.filled(i, t0, 66);
  }
  for (int round = 1; round <= 10; ++round)
    for (std::uint32_t i = 0; i < 8; ++i) t.touch(i, t0 + std::chrono::milliseconds(100 * round) + std::chrono::microseconds(i), 66);
  const auto now = t0 + 1050ms;
  const auto alone = t.plan_evictions(now, 0);
  ASSERT_EQ(alone.size(), 1u) << "alone, it keeps 7 of the 8 it asked for within grace: the reserve's slot goes";
  EXPECT_EQ(alone[0].slot, 0u) << "its least recently requested";
  const std::vector<Requester> waiting{7};
  const auto ev = t.plan_evictions(now, 2, waiting);
  ASSERT_EQ(ev.size(), 2u) << "two honest faults: with two requesters active, the attacker keeps 3";
  EXPECT_EQ(ev[0].slot, 1u);
  EXPECT_EQ(ev[1].slot, 2u);
  EXPECT_EQ(t.over_share_evictions(), 3u);
}

TEST(SlotTable, ASharedSegmentStaysWhileAnyOfItsViewersProtectsIt) {
  SlotTable t(4, 2s, 1s, 1);
  for (std::uint32_t i = 0; i < 4; ++i) {
    ASSERT_EQ(t.take({1, i}, t0), i);
    t.filled(i, t0, 66);
  }
  // Viewer 7 reads slot 2 (asked for after the attacker's touches); the attacker touches every slot.
  for (std::uint32_t i = 0; i < 4; ++i) t.touch(i, t0 + 500ms + std::chrono::microseconds(i), 66);
  t.touch(2, t0 + 400ms, 7);
  const std::vector<Requester> waiting{9};
  // Three requesters (66, 7, 9): a share of 1 each. 66 keeps its most recent (slot 3);
  // 7 keeps slot 2; slots 0 and 1 go.
  const auto ev = t.plan_evictions(t0 + 600ms, 1, waiting);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].slot, 0u);
  EXPECT_EQ(ev[1].slot, 1u);
  EXPECT_EQ(t.state(2), State::resident);
}

TEST(SlotTable, ASlotRemembersAFewRequestersAtMost) {
  SlotTable t(2, 2s, 1s, 0);
  ASSERT_EQ(t.take({1, 0}, t0), 0u);
  t.filled(0, t0, 1);
  for (Requester who = 2; who < 100000; ++who) t.touch(0, t0 + std::chrono::microseconds(who), who);
  ASSERT_EQ(t.take({1, 1}, t0), 1u);
  t.filled(1, t0 + 1s, 5);
  // Requester 1's request was pushed out long ago: slot 0 is protected by its last four requesters only.
  const std::vector<Requester> waiting{1};
  EXPECT_TRUE(t.plan_evictions(t0 + 1100ms, 1, waiting).empty()) << "six requesters, a share of at least one each: both slots protected";
}

}  // namespace
}  // namespace vod::server::cache
