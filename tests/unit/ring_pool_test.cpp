// SPDX-License-Identifier: LGPL-2.1-or-later
// Read engines' rings are kept for reuse: a closed session's ring serves the next one of the same
// size (already resident), the pool stays bounded, and rings are aligned as registration wants.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "vod/client/read_engine.hpp"
#include "vod/client/ring_pool.hpp"

namespace vod::client {
namespace {

TEST(RingPool, AClosedEnginesRingServesTheNextOne) {
  EngineOptions o;
  o.chunk_size = 256 * 1024;
  o.readahead_bytes = 4u << 20;
  const std::uint8_t* first = nullptr;
  {
    ReadEngine a(o);
    first = a.ring();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % (2u << 20), 0u) << "a ring of huge-page size is huge-page aligned";
  }
  ReadEngine b(o);
  EXPECT_EQ(b.ring(), first) << "the next session did not take the spare ring";
}

TEST(RingPool, SmallRingsStayInSmallPages) {
  RingMemory r = take_ring(64 * 1024);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(r.get()) % 4096, 0u);
  EXPECT_EQ(r.get_deleter().bytes, 64u * 1024) << "a small ring is not rounded up to a huge page";
}

TEST(RingPool, TheSpareRingsAreBounded) {
  std::vector<RingMemory> rings;
  for (int i = 0; i < 12; ++i) rings.push_back(take_ring(4u << 20));
  rings.clear();  // all returned at once
  EXPECT_LE(spare_rings(), 4u);
  EXPECT_GE(spare_rings(), 1u);
}

}  // namespace
}  // namespace vod::client
