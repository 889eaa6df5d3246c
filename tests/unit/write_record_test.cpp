#include <gtest/gtest.h>

#include "vod/protocol/write_record.hpp"
#include "wire_test_support.hpp"

namespace vod::proto {
namespace {

using test::ByteVector;
using test::fails_with;
using test::get_be;
using test::put_be;

TEST(WriteRecordAdvert, LayoutRoundTripAndErrors) {
  const WriteRecordAdvert a{77, 0, 64u << 20, 8192};
  const ByteVector v = encode(a);
  ASSERT_EQ(v.size(), 32u);
  EXPECT_EQ(v[5], 6);
  EXPECT_EQ(get_be(v, 8, 4), 77u);
  EXPECT_EQ(get_be(v, 16, 8), 64u << 20);
  EXPECT_EQ(get_be(v, 24, 4), 8192u);
  EXPECT_EQ(*decode_write_record_advert(v), a);
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) { return decode_write_record_advert(test::with(v, at, value, width)); };
  EXPECT_TRUE(fails_with(poked(12, 1, 4), DecodeFault::bad_field, "flags 0x1"));
  EXPECT_TRUE(fails_with(poked(16, 0, 8), DecodeFault::bad_field, "empty buffer"));
  EXPECT_TRUE(fails_with(poked(24, 0, 4), DecodeFault::bad_field, "max payload 0"));
  EXPECT_TRUE(fails_with(poked(24, 70000, 4), DecodeFault::bad_field, "max payload 70000"));
}

TEST(WriteRecordData, LayoutRoundTripAndPayloadView) {
  const ByteVector payload = {1, 2, 3, 4, 5};
  WriteRecordData d{9, kRecordLastDatagram, 3, 100, 95, 4000, payload};
  const ByteVector v = encode(d);
  ASSERT_EQ(v.size(), 48u + 5);
  EXPECT_EQ(v[5], 7);
  EXPECT_EQ(get_be(v, 6, 2), 53u);
  EXPECT_EQ(get_be(v, 8, 4), 9u);
  EXPECT_EQ(get_be(v, 12, 2), kRecordLastDatagram);
  EXPECT_EQ(get_be(v, 14, 2), 5u);
  EXPECT_EQ(get_be(v, 16, 8), 3u);
  EXPECT_EQ(get_be(v, 24, 8), 100u);
  EXPECT_EQ(get_be(v, 32, 8), 95u);
  EXPECT_EQ(get_be(v, 40, 8), 4000u);
  auto r = decode_write_record_data(v, 4100);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(*r, d);
  EXPECT_EQ(r->payload.data(), v.data() + 48);  // a view, not a copy
}

TEST(WriteRecordData, OutOfBoundsDatagramsAreErrorsNeverWrites) {
  const ByteVector payload(10, 0xaa);
  const ByteVector good = encode(WriteRecordData{1, 0, 0, 100, 90, 0, payload});
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width, std::uint64_t buffer = 1000) {
    return decode_write_record_data(test::with(good, at, value, width), buffer);
  };
  EXPECT_TRUE(decode_write_record_data(good, 100).ok());
  EXPECT_TRUE(fails_with(decode_write_record_data(good, 99), DecodeFault::inconsistent, "out of bounds"));
  EXPECT_TRUE(fails_with(poked(40, 901, 8), DecodeFault::inconsistent, "record [901, +100) does not fit the advertised 1000"));
  EXPECT_TRUE(fails_with(poked(40, ~0ull, 8), DecodeFault::inconsistent, "out of bounds"));
  EXPECT_TRUE(fails_with(poked(32, 91, 8), DecodeFault::inconsistent, "outside its 100-byte record"));
  EXPECT_TRUE(fails_with(poked(32, ~0ull - 3, 8), DecodeFault::inconsistent, "outside its"));
  EXPECT_TRUE(fails_with(poked(24, ~0ull, 8), DecodeFault::inconsistent, "out of bounds"));
  EXPECT_TRUE(fails_with(poked(14, 9, 2), DecodeFault::inconsistent, "payload length 9 but the header's length field says 10"));
  EXPECT_TRUE(fails_with(poked(12, 0x2, 2), DecodeFault::bad_field, "undefined flags 0x2"));
  ByteVector empty = encode(WriteRecordData{1, 0, 0, 100, 0, 0, {}});
  EXPECT_TRUE(fails_with(decode_write_record_data(empty, 1000), DecodeFault::bad_field, "empty payload in a non-empty record"));
}

}  // namespace
}  // namespace vod::proto
