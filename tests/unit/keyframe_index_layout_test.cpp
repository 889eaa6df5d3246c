#include <gtest/gtest.h>

#include <stdexcept>

#include "vod/protocol/keyframe_index_layout.hpp"
#include "wire_test_support.hpp"

namespace vod::proto {
namespace {

using test::ByteVector;
using test::fails_with;
using test::get_be;
using test::put_be;

KeyframeIndex sample() {
  KeyframeIndex k;
  k.movie_size = 10'000'000;
  k.flags = kIndexDirectEntry;
  for (std::uint64_t i = 0; i < 5; ++i) k.entries.push_back({i * 2'000'000, 188 * (1 + i * 10'000)});
  return k;
}

TEST(KeyframeIndex, LayoutAndRoundTrip) {
  const ByteVector v = encode_index(sample());
  ASSERT_EQ(v.size(), 32u + 5 * 16);
  EXPECT_EQ(std::string(v.begin(), v.begin() + 4), "RVKI");
  EXPECT_EQ(v[4], 1);
  EXPECT_EQ(get_be(v, 6, 2), 32u);
  EXPECT_EQ(get_be(v, 8, 4), 5u);
  EXPECT_EQ(get_be(v, 12, 2), 16u);
  EXPECT_EQ(get_be(v, 14, 2), kIndexDirectEntry);
  EXPECT_EQ(get_be(v, 16, 8), 10'000'000u);
  EXPECT_EQ(get_be(v, 32 + 16, 8), 2'000'000u);  // entry 1 time
  EXPECT_EQ(get_be(v, 32 + 24, 8), 188u * 10'001);
  auto d = decode_index(v);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, sample());
}

TEST(KeyframeIndex, AtOrBeforePicksTheLastKeyframeNotAfterT) {
  const KeyframeIndex k = sample();
  EXPECT_EQ(k.at_or_before(0)->time_us, 0u);
  EXPECT_EQ(k.at_or_before(1'500'000)->time_us, 0u);
  EXPECT_EQ(k.at_or_before(2'000'000)->time_us, 2'000'000u);
  EXPECT_EQ(k.at_or_before(7'999'999)->time_us, 6'000'000u);
  EXPECT_EQ(k.at_or_before(~0ull)->time_us, 8'000'000u);
  KeyframeIndex late = k;
  late.entries.erase(late.entries.begin());
  EXPECT_EQ(late.at_or_before(0)->time_us, 2'000'000u);  // before the first: the first
  EXPECT_EQ(KeyframeIndex{}.at_or_before(5), nullptr);
}

TEST(KeyframeIndex, RejectsEachMalformedField) {
  const ByteVector good = encode_index(sample());
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) { return decode_index(test::with(good, at, value, width)); };
  EXPECT_TRUE(fails_with(decode_index(ByteVector(31)), DecodeFault::truncated, "fewer than the 32-byte header"));
  EXPECT_TRUE(fails_with(poked(0, 1, 4), DecodeFault::bad_magic, "magic 0x1"));
  EXPECT_TRUE(fails_with(poked(4, 0, 1), DecodeFault::unsupported_version, "layout version 0"));
  EXPECT_TRUE(fails_with(poked(6, 16, 2), DecodeFault::bad_length, "header length 16"));
  EXPECT_TRUE(fails_with(poked(12, 8, 2), DecodeFault::bad_length, "entry size 8"));
  EXPECT_TRUE(fails_with(poked(8, 6, 4), DecodeFault::truncated, "6 entries of 16 bytes"));
  EXPECT_TRUE(fails_with(poked(8, 0xffffffff, 4), DecodeFault::truncated, "4294967295 entries"));
  EXPECT_TRUE(fails_with(poked(14, 0x8000, 2), DecodeFault::bad_field, "undefined flags 0x8000"));
  EXPECT_TRUE(fails_with(poked(32 + 3 * 16 + 8, 10'000'000, 8), DecodeFault::inconsistent, "entry 3 offset 10000000"));
  EXPECT_TRUE(fails_with(poked(32 + 2 * 16, 1, 8), DecodeFault::inconsistent, "entry 2 time 1 us precedes"));
}

TEST(KeyframeIndex, EncoderRefusesDisorder) {
  KeyframeIndex k = sample();
  std::swap(k.entries[1], k.entries[2]);
  EXPECT_THROW(encode_index(k), std::invalid_argument);
  k = sample();
  k.entries.back().offset = k.movie_size;
  EXPECT_THROW(encode_index(k), std::invalid_argument);
}

}  // namespace
}  // namespace vod::proto
