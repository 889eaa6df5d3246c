// SPDX-License-Identifier: LGPL-2.1-or-later
// Write-Record messages: offsets byte by byte, round trips, CRC32C, and every malformed field
// (bounds computed without overflow, truncated datagrams, bad checksums) refused by its decoder.
#include <gtest/gtest.h>

#include <string>

#include "vod/protocol/crc32c.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/write_record.hpp"
#include "wire_test_support.hpp"

namespace vod::proto {
namespace {

using test::ByteVector;
using test::fails_with;
using test::get_be;
using test::put_be;

TEST(Crc32c, KnownVectorsAndContinuation) {
  const std::string check = "123456789";
  const Bytes b(reinterpret_cast<const std::uint8_t*>(check.data()), check.size());
  EXPECT_EQ(crc32c(0, b), 0xe3069283u);  // the standard check value (RFC 3720, appendix B.4)
  EXPECT_EQ(crc32c(crc32c(0, b.first(4)), b.subspan(4)), 0xe3069283u);
  const ByteVector zeros(32, 0);
  EXPECT_EQ(crc32c(0, zeros), 0x8a9136aau);  // RFC 3720: 32 bytes of zeros
  ByteVector long_input(1000);
  for (std::size_t i = 0; i < long_input.size(); ++i) long_input[i] = static_cast<std::uint8_t>(i * 7);
  std::uint32_t piecewise = 0;
  for (std::size_t at = 0; at < long_input.size(); at += 13)
    piecewise = crc32c(piecewise, Bytes(long_input).subspan(at, std::min<std::size_t>(13, long_input.size() - at)));
  EXPECT_EQ(piecewise, crc32c(0, long_input));
}

WriteRecordRequest request() {
  WriteRecordRequest r;
  r.session_id = 0x11223344;
  r.epoch = 7;
  r.record_seq = 99;
  r.cookie[0] = 0xab;
  r.cookie[15] = 0xcd;
  r.region = WriteRecordRegion::movie;
  r.catalog_generation = 3;
  r.selector = name_hash("a.ts");
  r.offset = 1'000'000;
  r.length = 262'144;
  r.buffer_offset = 524'288;
  r.buffer_length = 4u << 20;
  r.max_payload = 1416;
  r.rate_bps = 200'000'000;
  return r;
}

TEST(WriteRecordRequest, LayoutAndRoundTrip) {
  const ByteVector v = encode(request());
  ASSERT_EQ(v.size(), 104u);
  EXPECT_EQ(v[5], 6);
  EXPECT_EQ(get_be(v, 8, 4), 0x11223344u);
  EXPECT_EQ(get_be(v, 12, 4), 7u);
  EXPECT_EQ(get_be(v, 16, 8), 99u);
  EXPECT_EQ(v[24], 0xab);
  EXPECT_EQ(v[39], 0xcd);
  EXPECT_EQ(v[40], 2);  // region: movie
  EXPECT_EQ(get_be(v, 44, 4), 3u);
  EXPECT_EQ(get_be(v, 48, 8), name_hash("a.ts"));
  EXPECT_EQ(get_be(v, 56, 8), 1'000'000u);
  EXPECT_EQ(get_be(v, 64, 8), 262'144u);
  EXPECT_EQ(get_be(v, 72, 8), 524'288u);
  EXPECT_EQ(get_be(v, 80, 8), 4u << 20);
  EXPECT_EQ(get_be(v, 88, 4), 1416u);
  EXPECT_EQ(get_be(v, 96, 8), 200'000'000u);
  EXPECT_EQ(*decode_write_record_request(v), request());
}

TEST(WriteRecordRequest, RejectsEachMalformedField) {
  const ByteVector good = encode(request());
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) {
    return decode_write_record_request(test::with(good, at, value, width));
  };
  EXPECT_TRUE(fails_with(poked(40, 4, 1), DecodeFault::bad_field, "unknown region 4"));
  EXPECT_TRUE(fails_with(poked(41, 1, 1), DecodeFault::bad_field, "flags"));
  EXPECT_TRUE(fails_with(poked(64, 0, 8), DecodeFault::bad_field, "a range of 0 bytes"));
  EXPECT_TRUE(fails_with(poked(56, ~0ull, 8), DecodeFault::bad_field, "wraps"));
  EXPECT_TRUE(fails_with(poked(72, (4u << 20) - 100, 8), DecodeFault::inconsistent, "does not fit the advertised"));
  EXPECT_TRUE(fails_with(poked(72, ~0ull, 8), DecodeFault::inconsistent, "does not fit"));  // no overflow past 2^64
  EXPECT_TRUE(fails_with(poked(88, 10, 4), DecodeFault::bad_field, "max payload 10"));
  EXPECT_TRUE(fails_with(poked(88, 70000, 4), DecodeFault::bad_field, "max payload 70000"));
  EXPECT_TRUE(fails_with(poked(96, 0, 8), DecodeFault::bad_field, "a rate of 0"));
  auto catalog = request();
  catalog.region = WriteRecordRegion::catalog;
  EXPECT_TRUE(fails_with(decode_write_record_request(encode(catalog)), DecodeFault::inconsistent, "takes no selector"));
  EXPECT_TRUE(
      fails_with(decode_write_record_request(ByteVector(good.begin(), good.begin() + 100)), DecodeFault::truncated, "only 100 bytes"));
}

TEST(WriteRecordRequest, IdsArePeekedFromWhatArrivedOfOneThatDoesNotDecode) {
  const ByteVector good = encode(request());
  const WriteRecordIds ids = peek_write_record_ids(test::with(good, 40, 9, 1));  // an unknown region
  EXPECT_EQ(ids.session_id, 0x11223344u);
  EXPECT_EQ(ids.epoch, 7u);
  EXPECT_EQ(ids.record_seq, 99u);
  EXPECT_EQ(peek_write_record_ids(ByteVector(good.begin(), good.begin() + 24)).record_seq, 99u);
  const WriteRecordIds cut = peek_write_record_ids(ByteVector(good.begin(), good.begin() + 23));  // record_seq cut off
  EXPECT_EQ(cut.session_id, 0u);
  EXPECT_EQ(cut.record_seq, 0u);
  EXPECT_EQ(peek_write_record_ids(ByteVector()).epoch, 0u);
}

TEST(WriteRecordHelloAndCookie, TheAnswerIsNeverLargerThanTheHello) {
  const ByteVector hello = encode(WriteRecordHello{0x0102030405060708});
  ASSERT_EQ(hello.size(), 64u);
  EXPECT_EQ(hello[5], 8);
  EXPECT_EQ(get_be(hello, 8, 8), 0x0102030405060708u);
  EXPECT_EQ(decode_write_record_hello(hello)->nonce, 0x0102030405060708u);
  WriteRecordCookie c{0x0102030405060708, {}, 60, 1416};
  c.cookie[3] = 9;
  const ByteVector cookie = encode(c);
  EXPECT_LE(cookie.size(), hello.size());
  EXPECT_EQ(cookie.size(), 48u);
  EXPECT_EQ(cookie[5], 9);
  EXPECT_EQ(cookie[19], 9);  // the cookie bytes start at 16
  EXPECT_EQ(get_be(cookie, 32, 4), 60u);
  EXPECT_EQ(get_be(cookie, 36, 4), 1416u);
  EXPECT_EQ(*decode_write_record_cookie(cookie), c);
  EXPECT_TRUE(fails_with(decode_write_record_cookie(test::with(cookie, 36, 0, 4)), DecodeFault::bad_field, "max payload 0"));
  EXPECT_TRUE(fails_with(decode_write_record_hello(ByteVector(hello.begin(), hello.begin() + 40)), DecodeFault::truncated, "only 40"));
}

TEST(WriteRecordError, LayoutRoundTripAndLimits) {
  const WriteRecordError e{5, 6, 7, RejectCode::bad_cookie, "the cookie expired: say hello again"};
  const ByteVector v = encode(e);
  EXPECT_EQ(v[5], 10);
  EXPECT_EQ(get_be(v, 24, 2), 10u);
  EXPECT_EQ(*decode_write_record_error(v), e);
  EXPECT_LE(encode(WriteRecordError{0, 0, 0, RejectCode::rate_limited, std::string(500, 'x')}).size(), 104u)
      << "never larger than a request";
  EXPECT_TRUE(fails_with(decode_write_record_error(test::with(v, 24, 13, 2)), DecodeFault::bad_field, "unknown code 13"));
}

ByteVector datagram(std::uint64_t buffer_offset = 900, std::uint64_t record_offset = 0, std::size_t n = 100) {
  static ByteVector payload(4096);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i);
  WriteRecordData d;
  d.session_id = 0x55;
  d.flags = kRecordLastDatagram;
  d.epoch = 4;
  d.record_seq = 8;
  d.record_length = 100;
  d.record_offset = record_offset;
  d.buffer_offset = buffer_offset;
  d.payload = Bytes(payload).first(n);
  return encode(d);
}

TEST(WriteRecordData, LayoutAndRoundTrip) {
  const ByteVector v = datagram();
  ASSERT_EQ(v.size(), 156u);
  EXPECT_EQ(v[5], 7);
  EXPECT_EQ(get_be(v, 6, 2), 156u);
  EXPECT_EQ(get_be(v, 8, 4), 0x55u);
  EXPECT_EQ(get_be(v, 12, 2), kRecordLastDatagram);
  EXPECT_EQ(get_be(v, 14, 2), 100u);
  EXPECT_EQ(get_be(v, 16, 8), 8u);
  EXPECT_EQ(get_be(v, 24, 8), 100u);
  EXPECT_EQ(get_be(v, 32, 8), 0u);
  EXPECT_EQ(get_be(v, 40, 8), 900u);
  EXPECT_EQ(get_be(v, 48, 4), 4u);
  auto d = decode_write_record_data(v, 1000);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->epoch, 4u);
  EXPECT_EQ(d->payload.size(), 100u);
  EXPECT_EQ(d->payload[99], 99);
}

TEST(WriteRecordData, BoundsChecksumAndTruncationRefusedNeverWritten) {
  const ByteVector good = datagram();
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) {
    return decode_write_record_data(test::with(good, at, value, width), 1000);
  };
  EXPECT_TRUE(decode_write_record_data(good, 1000).ok());
  EXPECT_TRUE(fails_with(decode_write_record_data(good, 999), DecodeFault::inconsistent, "out of bounds"));
  EXPECT_TRUE(fails_with(poked(40, 901, 8), DecodeFault::inconsistent, "record [901, +100) does not fit the advertised 1000"));
  EXPECT_TRUE(fails_with(poked(40, ~0ull, 8), DecodeFault::inconsistent, "out of bounds"));  // buffer offset near 2^64
  EXPECT_TRUE(fails_with(poked(32, 91, 8), DecodeFault::inconsistent, "outside its 100-byte record"));
  EXPECT_TRUE(fails_with(poked(32, ~0ull - 3, 8), DecodeFault::inconsistent, "outside its"));  // record offset wraps
  EXPECT_TRUE(fails_with(poked(24, ~0ull, 8), DecodeFault::inconsistent, "out of bounds"));    // record length near 2^64
  EXPECT_TRUE(fails_with(poked(12, 0x40, 2), DecodeFault::bad_field, "undefined flags 0x40"));
  EXPECT_TRUE(fails_with(poked(12, kRecordKeyframe, 2), DecodeFault::bad_field, "without a stream offset"));
  EXPECT_TRUE(fails_with(poked(48, 5, 4), DecodeFault::inconsistent, "CRC32C"));  // the epoch is under the checksum
  ByteVector flipped = good;
  flipped[120] ^= 1;  // one bit of the payload
  EXPECT_TRUE(fails_with(decode_write_record_data(flipped, 1000), DecodeFault::inconsistent, "CRC32C"));
  // Cut short (MSG_TRUNC) or with bytes after it: the header's lengths no longer describe it.
  EXPECT_TRUE(
      fails_with(decode_write_record_data(ByteVector(good.begin(), good.end() - 1), 1000), DecodeFault::inconsistent, "155 bytes arrived"));
  ByteVector longer = good;
  longer.push_back(0);
  EXPECT_TRUE(fails_with(decode_write_record_data(longer, 1000), DecodeFault::inconsistent, "157 bytes arrived"));
  EXPECT_TRUE(fails_with(decode_write_record_data(ByteVector(good.begin(), good.begin() + 50), 1000), DecodeFault::truncated,
                         "fewer than the 56-byte"));
  EXPECT_TRUE(fails_with(decode_write_record_data(encode(request()), 1000), DecodeFault::wrong_type, "where 7 was expected"));
}

TEST(WriteRecordData, LiveStreamOffsetsAreBoundedByTheRingAndNeverWrap) {
  WriteRecordData d;
  d.session_id = live_channel_id("cam");
  d.flags = kRecordStreamOffset | kRecordKeyframe | kRecordLastDatagram;
  d.epoch = 2;
  d.record_seq = 7;
  const ByteVector payload(376, 0x47);
  d.payload = payload;
  d.record_length = 376;
  d.buffer_offset = 5'000'000'000ull;  // a stream offset: far beyond the ring, which is fine
  const ByteVector v = encode(d);
  auto ok = decode_write_record_data(v, 1u << 20);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(*ok, d);
  EXPECT_TRUE(fails_with(decode_write_record_data(v, 300), DecodeFault::inconsistent, "longer than the 300-byte ring"));
  d.buffer_offset = ~0ull - 100;  // the record would wrap 2^64
  EXPECT_TRUE(fails_with(decode_write_record_data(encode(d), 1u << 20), DecodeFault::inconsistent, "wraps the 64-bit"));
  d.buffer_offset = 0;
  d.flags = kRecordStreamOffset | kRecordEndOfStream;
  EXPECT_TRUE(fails_with(decode_write_record_data(encode(d), 1u << 20), DecodeFault::bad_field, "end of stream with 376 bytes"));
  EXPECT_EQ(live_channel_id("cam"), static_cast<std::uint32_t>(name_hash("cam")));
}

TEST(WriteRecordData, TheHeaderAloneIsCheckedAgainstTheDatagramsRealLength) {
  const ByteVector good = datagram();
  const Bytes head = Bytes(good).first(56);
  EXPECT_TRUE(decode_write_record_data_header(head, 1000, good.size()).ok());
  EXPECT_TRUE(fails_with(decode_write_record_data_header(head, 1000, good.size() + 10), DecodeFault::inconsistent, "166 bytes arrived"));
  EXPECT_TRUE(fails_with(decode_write_record_data_header(head, 999, good.size()), DecodeFault::inconsistent, "out of bounds"));
}

}  // namespace
}  // namespace vod::proto
