// SPDX-License-Identifier: LGPL-2.1-or-later
// The segment table region and the segment messages (protocol version 2): offsets byte by byte,
// round trips, every malformed field named by the decoder, and the version-2 catalog entry and
// accept beside version 1's.
#include <gtest/gtest.h>

#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/protocol/segment_table.hpp"
#include "wire_test_support.hpp"

namespace vod::proto {
namespace {

using test::ByteVector;
using test::fails_with;
using test::get_be;
using test::with;

SegmentTableHeader header() {
  SegmentTableHeader h;
  h.segment_size = 1u << 20;
  h.movie_size = 3 * (1u << 20) + 5;
  h.segment_count = 4;
  h.arena_length = 8u << 20;
  h.read_deadline_ms = 1000;
  h.request_credits = 8;
  h.grace_ms = 2000;
  return h;
}

TEST(SegmentEntry, PacksGenerationStateSlotIntoOneWord) {
  const SegmentEntry e{0x01020304, SegmentState::resident, 0x0a0b0c};
  EXPECT_EQ(pack(e), 0x01020304'010a0b0cull);
  EXPECT_EQ(*unpack_segment_entry(pack(e)), e);
  EXPECT_EQ(*unpack_segment_entry(0x00000007'00000000ull), (SegmentEntry{7, SegmentState::absent, 0}));
  EXPECT_TRUE(fails_with(unpack_segment_entry(0x00000001'02000000ull), DecodeFault::bad_field, "state 2"));
  EXPECT_TRUE(fails_with(unpack_segment_entry(0x00000001'00000003ull), DecodeFault::inconsistent, "absent segment names slot 3"));
}

TEST(SegmentTable, LayoutAndRoundTrip) {
  const std::vector<SegmentEntry> entries{
      {1, SegmentState::resident, 2}, {3, SegmentState::absent, 0}, {4, SegmentState::resident, 7}, {0, SegmentState::absent, 0}};
  const ByteVector v = encode_segment_table(header(), entries);
  ASSERT_EQ(v.size(), 64u + 4 * 8);
  EXPECT_EQ(get_be(v, 0, 4), kSegmentTableMagic);
  EXPECT_EQ(v[4], 2);
  EXPECT_EQ(get_be(v, 6, 2), 64u);
  EXPECT_EQ(get_be(v, 8, 4), 1u << 20);
  EXPECT_EQ(get_be(v, 12, 4), 4u);
  EXPECT_EQ(get_be(v, 16, 8), 3u * (1u << 20) + 5);
  EXPECT_EQ(get_be(v, 24, 8), 8u << 20);
  EXPECT_EQ(get_be(v, 32, 4), 1000u);
  EXPECT_EQ(get_be(v, 36, 2), 8u);
  EXPECT_EQ(get_be(v, 40, 4), 2000u);
  EXPECT_EQ(get_be(v, segment_entry_offset(2), 8), pack(entries[2]));
  const auto h = decode_segment_table_header(v, v.size());
  ASSERT_TRUE(h.ok()) << h.error().message;
  EXPECT_EQ(*h, header());
  const auto e = decode_segment_entries(Bytes(v).subspan(64), 4, 7);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(*e, entries);
  EXPECT_TRUE(fails_with(decode_segment_entries(Bytes(v).subspan(64), 4, 6), DecodeFault::inconsistent, "slot 7 is past"));
}

TEST(SegmentTable, MalformedHeadersAreNamed) {
  const ByteVector v = encode_segment_table(header(), std::vector<SegmentEntry>(4));
  EXPECT_TRUE(fails_with(decode_segment_table_header(ByteVector(63), 63), DecodeFault::truncated, "64-byte header"));
  EXPECT_TRUE(fails_with(decode_segment_table_header(with(v, 0, 1, 4), v.size()), DecodeFault::bad_magic, "magic"));
  EXPECT_TRUE(fails_with(decode_segment_table_header(with(v, 4, 1, 1), v.size()), DecodeFault::unsupported_version, "version 1"));
  EXPECT_TRUE(fails_with(decode_segment_table_header(with(v, 8, 3u << 20, 4), v.size()), DecodeFault::bad_field, "power of two"));
  EXPECT_TRUE(fails_with(decode_segment_table_header(with(v, 8, 4096, 4), v.size()), DecodeFault::bad_field, "64 KiB"));
  EXPECT_TRUE(fails_with(decode_segment_table_header(with(v, 12, 5, 4), v.size()), DecodeFault::inconsistent, "has 4"));
  EXPECT_TRUE(
      fails_with(decode_segment_table_header(with(v, 24, 3u << 19, 8), v.size()), DecodeFault::inconsistent, "whole number of slots"));
  EXPECT_TRUE(fails_with(decode_segment_table_header(with(v, 32, 0, 4), v.size()), DecodeFault::bad_field, "deadline 0"));
  EXPECT_TRUE(fails_with(decode_segment_table_header(with(v, 36, 0, 2), v.size()), DecodeFault::bad_field, "0 request credits"));
  EXPECT_TRUE(fails_with(decode_segment_table_header(v, v.size() + 8), DecodeFault::inconsistent, "entries need 96"));
}

TEST(SegmentMessages, RequestLayoutAndRoundTrip) {
  const SegmentRequest r{3, 17, 2, 99};
  const ByteVector v = encode(r);
  ASSERT_EQ(v.size(), 24u);
  EXPECT_EQ(v[4], 2);   // defined in version 2
  EXPECT_EQ(v[5], 11);  // segment_request
  EXPECT_EQ(get_be(v, 8, 4), 3u);
  EXPECT_EQ(get_be(v, 12, 4), 17u);
  EXPECT_EQ(get_be(v, 16, 2), 2u);
  EXPECT_EQ(get_be(v, 20, 4), 99u);
  EXPECT_EQ(*decode_segment_request(v), r);
  EXPECT_TRUE(fails_with(decode_segment_request(with(v, 16, 65, 2)), DecodeFault::bad_field, "read-ahead of 65"));
  EXPECT_TRUE(fails_with(decode_segment_request(ByteVector(v.begin(), v.begin() + 20)), DecodeFault::truncated, "only 20 bytes"));
}

TEST(SegmentMessages, NotifyLayoutAndRoundTrip) {
  const SegmentNotify n{3, 17, pack({9, SegmentState::resident, 5}), 0x1234, SegmentStatus::ok, 99};
  const ByteVector v = encode(n);
  ASSERT_EQ(v.size(), 40u);
  EXPECT_EQ(v[5], 12);
  EXPECT_EQ(get_be(v, 16, 8), n.entry);
  EXPECT_EQ(get_be(v, 24, 4), 0x1234u);
  EXPECT_EQ(get_be(v, 28, 2), 0u);
  EXPECT_EQ(get_be(v, 32, 4), 99u);
  EXPECT_EQ(*decode_segment_notify(v), n);
  EXPECT_TRUE(fails_with(decode_segment_notify(with(v, 28, 8, 2)), DecodeFault::bad_field, "undefined status 8"));
  EXPECT_TRUE(
      fails_with(decode_segment_notify(with(v, 16, pack({9, SegmentState::absent, 0}), 8)), DecodeFault::inconsistent, "not resident"));
  EXPECT_TRUE(fails_with(decode_segment_notify(with(v, 28, 3, 2)), DecodeFault::inconsistent, "with an entry"));
  const SegmentNotify failed{3, 17, 0, 0, SegmentStatus::disk_error, 99};
  EXPECT_EQ(*decode_segment_notify(encode(failed)), failed);
  const SegmentNotify busy{3, 17, 0, 0, SegmentStatus::busy, 100};
  EXPECT_EQ(*decode_segment_notify(encode(busy)), busy);
}

CatalogEntry entry(const std::string& name, bool segmented) {
  CatalogEntry e;
  e.name = name;
  e.size = 5000;
  e.flags = kEntryIsMedia | (segmented ? kEntrySegmented : 0);
  e.movie = segmented ? RegionDescriptor{0x10000, 8u << 20, 7} : RegionDescriptor{0x20000, 5000, 8};
  if (segmented) e.segments = {0x30000, 72, 9};
  return e;
}

TEST(SegmentedCatalog, Version1LayoutUnlessAnEntryIsSegmented) {
  const Catalog whole{4, {entry("a.ts", false)}, 0, {}};
  const ByteVector v1 = encode_catalog(whole);
  EXPECT_EQ(v1[4], 1);
  EXPECT_EQ(get_be(v1, 16, 4), 384u);  // 320, the unused segment descriptor and the content identity
  EXPECT_EQ(*decode_catalog(v1), whole);
  const Catalog mixed{5, {entry("a.ts", false), entry("b.ts", true)}, 0, {}};
  const ByteVector v2 = encode_catalog(mixed);
  EXPECT_EQ(v2[4], 2);
  EXPECT_EQ(get_be(v2, 16, 4), 384u);
  EXPECT_EQ(get_be(v2, 64 + 384 + 320, 8), 0x30000u);  // b's segment table descriptor follows its version-1 fields
  const auto back = decode_catalog(v2);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, mixed);
  // A segment table on an entry that is not segmented, or a segmented entry without one.
  EXPECT_TRUE(fails_with(decode_catalog(with(v2, 64 + 320 + 8, 64, 8)), DecodeFault::inconsistent, "not segmented"));
  EXPECT_TRUE(fails_with(decode_catalog(with(v2, 64 + 384 + 320 + 8, 16, 8)), DecodeFault::inconsistent, "segment table of at least 64"));
  // Version 2 entries shorter than 352 bytes.
  EXPECT_TRUE(fails_with(decode_catalog_header(with(v2, 16, 320, 4)), DecodeFault::bad_length, "below layout version 2's 352"));
}

TEST(SegmentedAccept, Version2LayoutOnlyWithASegmentTable) {
  AcceptData a;
  a.catalog_generation = 3;
  a.movie_index = 1;
  a.granted_read_depth = 16;
  a.max_message_size = 1u << 30;
  a.movie = {0x1000, 8u << 20, 5};
  a.catalog = {0x2000, 64 + 352, 6};
  a.index = {0x3000, 32, 7};
  const ByteVector plain = encode(AcceptData{a});
  EXPECT_EQ(plain.size(), 96u);
  EXPECT_EQ(plain[4], 1);
  a.segments = {0x4000, 72, 8};
  a.movie_size = 5000;
  const ByteVector v = encode(a);
  ASSERT_EQ(v.size(), 128u);
  EXPECT_EQ(v[4], 2);
  EXPECT_EQ(get_be(v, 96, 8), 0x4000u);
  EXPECT_EQ(get_be(v, 120, 8), 5000u);
  EXPECT_EQ(*decode_accept(v), a);
  EXPECT_TRUE(fails_with(decode_accept(with(v, 104, 16, 8)), DecodeFault::inconsistent, "64-byte header"));
}

TEST(ConnectVersion, TheRequestCarriesTheClientsVersion) {
  ConnectRequest r;
  EXPECT_EQ(encode(r)[4], kProtocolVersion);
  r.version = 1;
  const auto v1 = encode(r);
  EXPECT_EQ(v1[4], 1);
  EXPECT_EQ(decode_connect_request(v1)->version, 1);
}

}  // namespace
}  // namespace vod::proto
