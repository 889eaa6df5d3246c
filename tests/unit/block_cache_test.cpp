// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's block cache (client/src/engine/block_cache.hpp): a seek keeps the block at the
// new position findable even while an older fetch of the same block is still landing (a posted
// RDMA Read cannot be recalled), and what an invalidation frees, keeps and leaves landing.
#include <gtest/gtest.h>

#include <vector>

#include "engine/block_cache.hpp"

namespace vod::client::engine {
namespace {

const std::uint64_t kBlock = block_key(Region::movie, 30);

TEST(BlockCache, TheKeptSlotStaysFindableBesideAStaleFetchOfTheSameBlock) {
  BlockCache cache(4);
  cache.claim(0, kBlock, 4096, false).parts = 1;    // block 30 in flight
  cache.invalidate(-1, false, [](std::size_t) {});  // a seek away: it lands later, discarded
  EXPECT_FALSE(cache.find(kBlock));
  EXPECT_EQ(cache.slot(0).state, SlotState::in_flight);
  cache.claim(1, kBlock, 4096, false).parts = 1;  // the reader came back: block 30 again
  ASSERT_EQ(cache.find(kBlock), 1u);
  cache.invalidate(1, false, [](std::size_t) {});  // a seek within block 30 keeps slot 1
  EXPECT_EQ(cache.find(kBlock), 1u) << "the stale fetch in slot 0 made the kept slot 1 unfindable: its block would be read again";
  EXPECT_EQ(cache.slot(1).epoch, cache.epoch());
}

TEST(BlockCache, AnInvalidationFreesKeepsAndLetsLand) {
  BlockCache cache(5);
  cache.claim(0, block_key(Region::movie, 1), 4096, false).state = SlotState::ready;  // cached: freed
  cache.claim(1, block_key(Region::movie, 2), 4096, false).parts = 1;                 // in flight: lands, discarded
  Slot& head = cache.claim(2, block_key(Region::movie, 3), 4096, false);              // a landed head, rest never posted: freed
  head.head_to = 1024;
  head.head_ready = true;
  cache.claim(3, block_key(Region::movie, 4), 4096, false).state = SlotState::ready;  // kept
  cache.invalidate(3, false, [](std::size_t) { ADD_FAILURE() << "nothing is recalled over RDMA"; });
  EXPECT_EQ(cache.slot(0).state, SlotState::free);
  EXPECT_EQ(cache.slot(1).state, SlotState::in_flight);
  EXPECT_FALSE(cache.find(block_key(Region::movie, 2)));
  EXPECT_EQ(cache.slot(2).state, SlotState::free);
  EXPECT_EQ(cache.find(block_key(Region::movie, 4)), 3u);
  // A fetcher that recalls (UDP): in flight is freed at once, and said so.
  cache.claim(4, block_key(Region::movie, 5), 4096, false).parts = 1;
  std::vector<std::size_t> recalled;
  cache.invalidate(-1, true, [&](std::size_t s) { recalled.push_back(s); });
  EXPECT_EQ(recalled, (std::vector<std::size_t>{1, 4}));
  EXPECT_EQ(cache.slot(4).state, SlotState::free);
}

TEST(BlockCache, TakesAFreeSlotThenTheLeastRecentlyUsedUnpinned) {
  BlockCache cache(3);
  for (std::size_t s = 0; s < 3; ++s) cache.claim(s, block_key(Region::movie, s), 4096, false).state = SlotState::ready;
  cache.touch(0);  // 0 used last; 1 is the least recently used
  EXPECT_EQ(cache.take_slot([](const Slot& s) { return block_of(s.key) == 1; }), 2) << "1 is pinned: the next least recently used";
  EXPECT_EQ(cache.slot(2).state, SlotState::free);
  EXPECT_FALSE(cache.find(block_key(Region::movie, 2)));
  EXPECT_EQ(cache.take_slot([](const Slot&) { return true; }), 2) << "a free slot first, pinned or not";
  cache.claim(2, block_key(Region::movie, 9), 4096, false);  // in flight: never taken
  EXPECT_EQ(cache.take_slot([](const Slot&) { return true; }), -1);
}

}  // namespace
}  // namespace vod::client::engine
