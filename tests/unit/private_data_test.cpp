#include <gtest/gtest.h>

#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/private_data.hpp"
#include "wire_test_support.hpp"

namespace vod::proto {
namespace {

using test::ByteVector;
using test::fails_with;
using test::get_be;
using test::put_be;

ConnectRequest movie_request() {
  ConnectRequest r;
  r.kind = RequestKind::movie;
  r.selector_type = SelectorType::name_hash;
  r.selector = name_hash("big-buck-bunny.mp4");
  for (std::size_t i = 0; i < r.auth_token.size(); ++i) r.auth_token[i] = static_cast<std::uint8_t>(i * 7);
  return r;
}

TEST(ConnectRequest, FitsTheRoceLimitExactly) { EXPECT_EQ(encode(movie_request()).size(), kConnectPrivateDataMax); }

TEST(ConnectRequest, LayoutIsBigEndianAtDocumentedOffsets) {
  ConnectRequest r = movie_request();
  r.kind = RequestKind::live;
  r.selector_type = SelectorType::catalog_index;
  r.selector = 0x0102030405060708ull;
  r.catalog_generation = 0xa1b2c3d4u;
  const ByteVector v = encode(r);
  EXPECT_EQ(std::string(v.begin(), v.begin() + 4), "RVOD");
  EXPECT_EQ(v[4], kProtocolVersion);         // version: the highest the client speaks
  EXPECT_EQ(v[5], 1);                        // type connect_request
  EXPECT_EQ(get_be(v, 6, 2), 56u);           // length
  EXPECT_EQ(v[8], 3);                        // kind live
  EXPECT_EQ(v[9], 2);                        // selector type catalog_index
  EXPECT_EQ(v[10], 0);                       // flags
  EXPECT_EQ(v[11], 0);                       // auth type
  EXPECT_EQ(get_be(v, 12, 4), 0xa1b2c3d4u);  // catalog generation
  EXPECT_EQ(get_be(v, 16, 8), 0x0102030405060708ull);
  EXPECT_EQ(v[24], 0);  // token[0]
  EXPECT_EQ(v[55], 31 * 7);
}

TEST(ConnectRequest, RoundTripsEveryKindAndSelector) {
  for (auto kind : {RequestKind::movie, RequestKind::live, RequestKind::write_record}) {
    for (auto sel : {SelectorType::name_hash, SelectorType::catalog_index}) {
      ConnectRequest r = movie_request();
      r.kind = kind;
      r.selector_type = sel;
      r.catalog_generation = 9;
      auto d = decode_connect_request(encode(r));
      ASSERT_TRUE(d.ok()) << d.error().message;
      EXPECT_EQ(*d, r);
    }
  }
  ConnectRequest catalog;
  auto d = decode_connect_request(encode(catalog));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->kind, RequestKind::catalog_only);
}

TEST(ConnectRequest, ZeroPaddingAfterTheMessageIsIgnored) {
  ByteVector v = encode(movie_request());
  v.resize(96, 0);  // a transport may hand over a longer, zero-padded buffer
  auto d = decode_connect_request(v);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, movie_request());
}

TEST(ConnectRequest, LongerMessageFromALaterMinorRevisionDecodesItsPrefix) {
  ByteVector v = encode(movie_request());
  v.resize(60, 0xee);
  put_be(v, 6, 60, 2);
  auto d = decode_connect_request(v);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, movie_request());
}

TEST(ConnectRequest, RejectsEachMalformedField) {
  const ByteVector good = encode(movie_request());
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) {
    return decode_connect_request(test::with(good, at, value, width));
  };
  EXPECT_TRUE(fails_with(decode_connect_request(ByteVector{}), DecodeFault::truncated, "fewer than the 8-byte header"));
  EXPECT_TRUE(fails_with(decode_connect_request(ByteVector(good.begin(), good.begin() + 7)), DecodeFault::truncated, "7 bytes"));
  EXPECT_TRUE(fails_with(decode_connect_request(ByteVector(good.begin(), good.begin() + 40)), DecodeFault::truncated,
                         "length field 56 but only 40 bytes"));
  EXPECT_TRUE(fails_with(poked(0, 0x52564F45, 4), DecodeFault::bad_magic, "magic 0x52564f45"));
  EXPECT_TRUE(fails_with(poked(4, kProtocolVersion + 1, 1), DecodeFault::unsupported_version,
                         "protocol version " + std::to_string(kProtocolVersion + 1) + " not supported"));
  EXPECT_TRUE(fails_with(poked(4, 0, 1), DecodeFault::unsupported_version, "protocol version 0"));
  EXPECT_TRUE(fails_with(poked(5, 2, 1), DecodeFault::wrong_type, "message type 2"));
  EXPECT_TRUE(fails_with(poked(6, 55, 2), DecodeFault::bad_length, "length field 55 is below this message's 56"));
  EXPECT_TRUE(fails_with(poked(8, 0, 1), DecodeFault::bad_field, "unknown request kind 0"));
  EXPECT_TRUE(fails_with(poked(8, 5, 1), DecodeFault::bad_field, "unknown request kind 5"));
  EXPECT_TRUE(fails_with(poked(9, 3, 1), DecodeFault::bad_field, "unknown selector type 3"));
  EXPECT_TRUE(fails_with(poked(10, 0x80, 1), DecodeFault::bad_field, "flags 0x80"));
  EXPECT_TRUE(fails_with(poked(11, 2, 1), DecodeFault::bad_field, "unknown auth type 2"));
  EXPECT_TRUE(fails_with(poked(9, 0, 1), DecodeFault::inconsistent, "needs a selector"));
  EXPECT_TRUE(fails_with(poked(9, 2, 1), DecodeFault::inconsistent, "needs the catalog generation"));
  ConnectRequest catalog;
  ByteVector v = encode(catalog);
  put_be(v, 16, 42, 8);
  EXPECT_TRUE(fails_with(decode_connect_request(v), DecodeFault::inconsistent, "catalog-only request must have selector type none"));
}

TEST(ConnectRequest, DecodeFailuresMapToRejectCodes) {
  ByteVector v = encode(movie_request());
  v[4] = 7;
  EXPECT_EQ(reject_code_for(decode_connect_request(v).error()), RejectCode::unsupported_version);
  v[4] = 1;
  v[8] = 99;
  EXPECT_EQ(reject_code_for(decode_connect_request(v).error()), RejectCode::malformed_request);
}

AcceptData movie_accept() {
  AcceptData a;
  a.catalog_generation = 3;
  a.movie_index = 1;
  a.granted_read_depth = 16;
  a.max_message_size = 8u << 20;
  a.movie = {0x7f0000001000ull, 123456789, 0x1234};
  a.catalog = {0x7f0000900000ull, 64 + 2 * 320, 0x5678};
  a.index = {0x7f0000a00000ull, 32 + 16 * 40, 0x9abc};
  return a;
}

TEST(Accept, LayoutAndRoundTrip) {
  const ByteVector v = encode(movie_accept());
  ASSERT_EQ(v.size(), 96u);
  EXPECT_LE(v.size(), kAcceptPrivateDataMax);
  EXPECT_EQ(v[5], 2);
  EXPECT_EQ(get_be(v, 8, 4), 3u);
  EXPECT_EQ(get_be(v, 12, 4), 1u);
  EXPECT_EQ(get_be(v, 16, 2), 16u);
  EXPECT_EQ(get_be(v, 20, 4), 8u << 20);
  EXPECT_EQ(get_be(v, 24, 8), 0x7f0000001000ull);  // movie.addr
  EXPECT_EQ(get_be(v, 32, 8), 123456789u);         // movie.length
  EXPECT_EQ(get_be(v, 40, 4), 0x1234u);            // movie.rkey
  EXPECT_EQ(get_be(v, 48, 8), 0x7f0000900000ull);  // catalog.addr
  EXPECT_EQ(get_be(v, 72, 8), 0x7f0000a00000ull);  // index.addr
  EXPECT_EQ(get_be(v, 88, 4), 0x9abcu);
  auto d = decode_accept(v);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, movie_accept());

  ByteVector padded = v;
  padded.resize(kAcceptPrivateDataMax, 0);
  EXPECT_EQ(*decode_accept(padded), movie_accept());
}

TEST(Accept, CatalogOnlyHasNoMovie) {
  AcceptData a = movie_accept();
  a.movie_index = kNoMovie;
  a.movie = {};
  a.index = {};
  auto d = decode_accept(encode(a));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, a);
}

TEST(Accept, RejectsEachMalformedField) {
  const ByteVector good = encode(movie_accept());
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) { return decode_accept(test::with(good, at, value, width)); };
  EXPECT_TRUE(fails_with(poked(6, 95, 2), DecodeFault::bad_length, "below this message's 96"));
  EXPECT_TRUE(fails_with(poked(8, 0, 4), DecodeFault::bad_field, "catalog generation 0"));
  EXPECT_TRUE(fails_with(poked(16, 0, 2), DecodeFault::bad_field, "granted read depth 0"));
  EXPECT_TRUE(fails_with(poked(20, 0, 4), DecodeFault::bad_field, "max message size 0"));
  EXPECT_TRUE(fails_with(poked(24, ~0ull - 5, 8), DecodeFault::bad_field, "movie descriptor: addr"));
  EXPECT_TRUE(fails_with(poked(56, 63, 8), DecodeFault::inconsistent, "catalog region of 63 bytes"));
  EXPECT_TRUE(fails_with(poked(80, 31, 8), DecodeFault::inconsistent, "index region of 31 bytes"));
  ByteVector v = good;
  put_be(v, 32, 0, 8);  // movie length 0 but addr and rkey set
  EXPECT_TRUE(fails_with(decode_accept(v), DecodeFault::bad_field, "empty region with a non-zero addr or rkey"));
  EXPECT_TRUE(fails_with(poked(12, kNoMovie, 4), DecodeFault::inconsistent, "without a movie index"));
}

TEST(Reject, LayoutRoundTripAndSanitizing) {
  RejectData r{RejectCode::unknown_movie, 1, 1, "no movie 'x'; the catalog has 3 movies"};
  const ByteVector v = encode(r);
  EXPECT_EQ(v.size(), 12 + r.reason.size());
  EXPECT_EQ(v[5], 3);
  EXPECT_EQ(get_be(v, 8, 2), 1u);
  EXPECT_EQ(v[10], 1);
  EXPECT_EQ(v[11], 1);
  EXPECT_EQ(*decode_reject(v), r);

  RejectData odd{RejectCode::server_full, 1, 1, std::string("full\n\x01") + std::string(200, 'z')};
  auto d = decode_reject(encode(odd));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d->reason.size(), kRejectReasonMax);
  EXPECT_EQ(d->reason.substr(0, 6), "full??");
  EXPECT_LE(encode(odd).size(), kRejectPrivateDataMax);
}

TEST(Reject, EveryCodeRoundTripsWithAName) {
  for (std::uint16_t c = 1; c <= 9; ++c) {
    RejectData r{static_cast<RejectCode>(c), 1, 1, ""};
    EXPECT_EQ(decode_reject(encode(r))->code, r.code);
    EXPECT_STRNE(to_string(r.code), "unknown reject code");
  }
}

TEST(Reject, RejectsEachMalformedField) {
  const ByteVector good = encode(RejectData{RejectCode::server_full, 1, 1, "busy"});
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) { return decode_reject(test::with(good, at, value, width)); };
  EXPECT_TRUE(fails_with(poked(8, 0, 2), DecodeFault::bad_field, "unknown reject code 0"));
  EXPECT_TRUE(fails_with(poked(8, 13, 2), DecodeFault::bad_field, "unknown reject code 13"));
  EXPECT_TRUE(fails_with(poked(10, 0, 1), DecodeFault::inconsistent, "version range 0..1"));
  EXPECT_TRUE(fails_with(poked(10, 2, 1), DecodeFault::inconsistent, "version range 2..1"));
  EXPECT_TRUE(fails_with(poked(13, 0x07, 1), DecodeFault::bad_field, "reason byte 1 is 0x7"));
  ByteVector longer = good;
  longer.resize(12 + kRejectReasonMax + 1, 'a');
  put_be(longer, 6, longer.size(), 2);
  EXPECT_TRUE(fails_with(decode_reject(longer), DecodeFault::bad_length, "reason of 121 bytes"));
  EXPECT_TRUE(fails_with(poked(6, 11, 2), DecodeFault::bad_length, "below this message's 12"));
}

TEST(NameHash, IsFnv1a64) {
  EXPECT_EQ(name_hash("foobar"), 0x85944171f73967e8ull);
  EXPECT_NE(name_hash("movie-a.mp4"), name_hash("movie-b.mp4"));
}

}  // namespace
}  // namespace vod::proto
