// SPDX-License-Identifier: LGPL-2.1-or-later
// Windows over cache slots with tokens: who holds one over which slot, and what a refill does to
// them (windows/slot_watchers.hpp); the lease both sides compute (proto::window_use_ms).
#include <gtest/gtest.h>

#include <vector>

#include "vod/protocol/segment_table.hpp"
#include "windows/slot_watchers.hpp"

namespace vod::server::windows {
namespace {

struct Recorder final : SlotWatchers::Holder {
  std::vector<std::uint32_t> dropped;
  void slot_refilling(std::uint32_t slot) noexcept override { dropped.push_back(slot); }
};

TEST(SlotWatchers, ARefillDropsEveryWindowOverThatSlotOnceAndNoOther) {
  SlotWatchers w(4);
  Recorder a, b;
  w.watch(1, a);
  w.watch(1, a);  // once per holder, however often it binds there
  w.watch(1, b);
  w.watch(2, a);
  EXPECT_EQ(w.holders(1), 2u);
  w.refilling(1);
  EXPECT_EQ(a.dropped, std::vector<std::uint32_t>{1});
  EXPECT_EQ(b.dropped, std::vector<std::uint32_t>{1});
  EXPECT_EQ(w.holders(1), 0u) << "forgotten: the next refill of slot 1 tells nobody";
  w.refilling(1);
  EXPECT_EQ(a.dropped.size(), 1u);
  w.unwatch(2, a);  // the connection went: its windows with it
  w.refilling(2);
  EXPECT_EQ(a.dropped.size(), 1u);
  w.refilling(99);  // out of range: nothing
  w.unwatch(99, a);
}

TEST(SlotWatchers, AHolderMayWatchAgainFromItsOwnDrop) {
  SlotWatchers w(2);
  struct Rebinder final : SlotWatchers::Holder {
    SlotWatchers* w = nullptr;
    int drops = 0;
    void slot_refilling(std::uint32_t slot) noexcept override {
      ++drops;
      w->watch(slot, *this);  // e.g. a bind for the new segment, posted from the drop
    }
  } r;
  r.w = &w;
  w.watch(0, r);
  w.refilling(0);
  EXPECT_EQ(r.drops, 1);
  EXPECT_EQ(w.holders(0), 1u);
}

TEST(WindowLease, GraceOrAQuarterOfTheDeadlineAndTheServerKeepsLonger) {
  struct Row {
    std::uint32_t grace_ms, deadline_ms, use_ms;
  };
  for (const Row& r : {Row{2000, 3000, 2000}, Row{0, 1000, 250}, Row{300, 1000, 300}, Row{0, 100, 25}, Row{600000, 60000, 600000}}) {
    EXPECT_EQ(proto::window_use_ms(r.grace_ms, r.deadline_ms), r.use_ms) << r.grace_ms << "/" << r.deadline_ms;
    EXPECT_EQ(window_keep(r.grace_ms, r.deadline_ms).count(), r.use_ms + r.deadline_ms + 500);
    EXPECT_GT(proto::window_use_ms(r.grace_ms, r.deadline_ms), 0u) << "a client can always use the answer it waited for";
  }
}

}  // namespace
}  // namespace vod::server::windows
