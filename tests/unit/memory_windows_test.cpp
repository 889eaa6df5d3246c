// SPDX-License-Identifier: LGPL-2.1-or-later
// What memory windows rely on without a NIC: the rkey history never hands out a recent rkey again
// (so a client's old window rkey is invalid on its next connection), the catalog's windowed flag
// and rkey-less descriptors survive encoding, and clients match an accept to its entry by bytes.
#include <gtest/gtest.h>

#include <infiniband/verbs.h>

#include <set>

#include "vod/protocol/catalog_layout.hpp"
#include "windows/rkey_history.hpp"

namespace vod::server::windows {
namespace {

TEST(RkeyHistory, StepsTheKeyByteAndKeepsTheWindowIndex) {
  RkeyHistory h;
  const std::uint32_t window = 0x00012345u << 8 | 0x7f;
  const std::uint32_t first = h.next(window);
  EXPECT_EQ(first, ibv_inc_rkey(window));
  EXPECT_EQ(first & ~0xffu, window & ~0xffu) << "the index part is the window's";
  EXPECT_TRUE(h.seen(first));
}

TEST(RkeyHistory, AReusedWindowNeverGetsARecentRkeyAgain) {
  // The device reuses a freed window's index and may start it from the same key byte: every bind
  // of that index must still get an rkey not handed out before, as long as one is left.
  RkeyHistory h;
  const std::uint32_t window = 0x00000042u << 8 | 0x10;
  std::set<std::uint32_t> handed;
  for (int i = 0; i < 255; ++i) EXPECT_TRUE(handed.insert(h.next(window)).second) << "bind " << i << " repeated an rkey";
  EXPECT_EQ(handed.size(), 255u);
}

TEST(RkeyHistory, ForgetsTheOldestBeyondItsCapacity) {
  RkeyHistory h(4);
  std::uint32_t rkeys[6];
  for (std::uint32_t i = 0; i < 6; ++i) rkeys[i] = h.next((0x100u + i) << 8);
  EXPECT_EQ(h.size(), 4u);
  EXPECT_FALSE(h.seen(rkeys[0]));
  EXPECT_FALSE(h.seen(rkeys[1]));
  for (int i = 2; i < 6; ++i) EXPECT_TRUE(h.seen(rkeys[i]));
}

TEST(WindowedCatalog, FlagAndRkeylessDescriptorsRoundTrip) {
  proto::Catalog c;
  c.generation = 7;
  proto::CatalogEntry e;
  e.name = "film.mp4";
  e.size = 1000;
  e.movie = {0x7f0000001000, 1000, 0};
  e.index = {0x7f0000200000, 64, 0};
  e.flags = proto::kEntryIsMedia | proto::kEntryHasIndex | proto::kEntryWindowed;
  c.entries.push_back(e);
  auto decoded = proto::decode_catalog(proto::encode_catalog(c));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(*decoded, c);
  EXPECT_TRUE(decoded->entries[0].flags & proto::kEntryWindowed);
}

TEST(WindowedCatalog, AnAcceptMatchesItsEntryByBytesNotRkey) {
  const proto::RegionDescriptor listed{0x7f0000001000, 1000, 0};
  EXPECT_TRUE(listed.same_bytes({0x7f0000001000, 1000, 0x1234a1}));
  EXPECT_FALSE(listed.same_bytes({0x7f0000001000, 999, 0x1234a1}));
  EXPECT_FALSE(listed.same_bytes({0x7f0000002000, 1000, 0}));
}

}  // namespace
}  // namespace vod::server::windows
