#include <gtest/gtest.h>

#include <stdexcept>

#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/name_hash.hpp"
#include "wire_test_support.hpp"

namespace vod::proto {
namespace {

using test::ByteVector;
using test::fails_with;
using test::get_be;
using test::put_be;

CatalogEntry entry(const std::string& name, std::uint64_t size, std::uint64_t base) {
  CatalogEntry e;
  e.name = name;
  e.size = size;
  e.duration_us = 60'000'000;
  e.bitrate_bps = 8'700'000;
  e.movie = {base, size, 0x100u + static_cast<std::uint32_t>(size % 77)};
  e.index = {base + (1ull << 32), 32 + 16 * 30, 0x42};
  e.flags = kEntryIsMedia | kEntryHasIndex;
  e.width = 1920;
  e.height = 1080;
  e.container = "mp4";
  e.video_codec = "h264";
  e.audio_codec = "aac";
  e.mime_type = "video/mp4";
  return e;
}

Catalog sample() {
  Catalog c;
  c.generation = 7;
  c.instance = 0x0123456789abcdefull;
  c.entries.push_back(entry("hd-1080p.mp4", 65'000'000, 0x7f0000000000ull));
  c.entries.push_back(entry("sd 480p.ts", 7'500'000, 0x7f1000000000ull));
  CatalogEntry raw;
  raw.name = "notes.bin";
  raw.size = 1;
  raw.movie = {0x7f2000000000ull, 1, 9};
  raw.mime_type = "application/octet-stream";
  c.entries.push_back(raw);
  return c;
}

TEST(Catalog, LayoutAndRoundTrip) {
  const ByteVector v = encode_catalog(sample());
  ASSERT_EQ(v.size(), 64u + 3 * 384);
  EXPECT_EQ(std::string(v.begin(), v.begin() + 4), "RVCT");
  EXPECT_EQ(v[4], 1);
  EXPECT_EQ(get_be(v, 6, 2), 64u);
  EXPECT_EQ(get_be(v, 8, 4), 7u);     // generation
  EXPECT_EQ(get_be(v, 12, 4), 3u);    // entry count
  EXPECT_EQ(get_be(v, 16, 4), 384u);  // entry size: 320 and the content identity appended
  EXPECT_EQ(get_be(v, 24, 8), v.size());
  EXPECT_EQ(get_be(v, 32, 8), 0x0123456789abcdefull);  // the server process's instance
  const std::size_t e0 = 64;
  EXPECT_EQ(get_be(v, e0 + 0, 8), name_hash("hd-1080p.mp4"));
  EXPECT_EQ(get_be(v, e0 + 8, 8), 65'000'000u);
  EXPECT_EQ(get_be(v, e0 + 16, 8), 60'000'000u);
  EXPECT_EQ(get_be(v, e0 + 24, 8), 8'700'000u);
  EXPECT_EQ(get_be(v, e0 + 32, 8), 0x7f0000000000ull);  // movie.addr
  EXPECT_EQ(get_be(v, e0 + 80, 4), 3u);                 // flags
  EXPECT_EQ(get_be(v, e0 + 84, 2), 1920u);
  EXPECT_EQ(get_be(v, e0 + 86, 2), 1080u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&v[e0 + 104])), "h264");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&v[e0 + 136])), "video/mp4");
  EXPECT_EQ(get_be(v, e0 + 184, 2), 12u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&v[e0 + 192]), 12), "hd-1080p.mp4");

  auto info = decode_catalog_header(v);
  ASSERT_TRUE(info.ok()) << info.error().message;
  EXPECT_EQ(info->entry_count, 3u);
  EXPECT_EQ(info->region_length, v.size());
  auto d = decode_catalog(v);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, sample());
  EXPECT_EQ(d->find("sd 480p.ts")->size, 7'500'000u);
  EXPECT_EQ(d->find_hash(name_hash("notes.bin"))->size, 1u);
  EXPECT_EQ(d->find("missing"), nullptr);
}

TEST(Catalog, EmptyCatalogIsValid) {
  Catalog c;
  c.generation = 1;
  auto d = decode_catalog(encode_catalog(c));
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->entries.empty());
}

TEST(Catalog, LargerEntriesFromALaterRevisionDecode) {
  const ByteVector v1 = encode_catalog(sample());
  ByteVector v(64 + 3 * 416, 0xab);
  std::copy(v1.begin(), v1.begin() + 64, v.begin());
  put_be(v, 16, 416, 4);
  put_be(v, 24, v.size(), 8);
  for (int i = 0; i < 3; ++i) std::copy(v1.begin() + 64 + i * 384, v1.begin() + 64 + (i + 1) * 384, v.begin() + 64 + i * 416);
  auto d = decode_catalog(v);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, sample());
}

TEST(Catalog, ContentIdentityRoundTripsAndOlderLayoutsReadAsUnknown) {
  Catalog c = sample();
  c.entries[0].content.kind = kContentSha256;
  for (std::size_t i = 0; i < 16; ++i) c.entries[0].content.digest[i] = static_cast<std::uint8_t>(0xf0 + i);
  const ByteVector v = encode_catalog(c);
  EXPECT_EQ(v[64 + 352], 0xf0);  // the digest at 352, its kind at 368
  EXPECT_EQ(v[64 + 368], kContentSha256);
  auto d = decode_catalog(v);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, c);
  EXPECT_EQ(d->entries[0].content.hex(), "sha256:f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
  EXPECT_TRUE(d->entries[0].content.same(c.entries[0].content));
  EXPECT_FALSE(d->entries[1].content.known());
  EXPECT_FALSE(d->entries[1].content.same(d->entries[1].content));  // unknown is never the same, not even as itself
  ContentId other = c.entries[0].content;
  other.digest[15] ^= 1;
  EXPECT_FALSE(other.same(c.entries[0].content));

  // A kind this decoder does not know reads as unknown, not as a digest to compare.
  auto later = decode_catalog(test::with(v, 64 + 368, 7, 1));
  ASSERT_TRUE(later.ok()) << later.error().message;
  EXPECT_FALSE(later->entries[0].content.known());

  // A server of the previous revision writes 320-byte entries: everything decodes, identity unknown.
  ByteVector old(64 + 3 * 320);
  std::copy(v.begin(), v.begin() + 64, old.begin());
  put_be(old, 16, 320, 4);
  put_be(old, 24, old.size(), 8);
  for (int i = 0; i < 3; ++i) std::copy(v.begin() + 64 + i * 384, v.begin() + 64 + i * 384 + 320, old.begin() + 64 + i * 320);
  auto o = decode_catalog(old);
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_FALSE(o->entries[0].content.known());
  EXPECT_EQ(o->entries[0].name, c.entries[0].name);
}

TEST(Catalog, RejectsEachMalformedField) {
  const ByteVector good = encode_catalog(sample());
  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) { return decode_catalog(test::with(good, at, value, width)); };
  const std::size_t e1 = 64 + 384;
  EXPECT_TRUE(fails_with(decode_catalog(ByteVector(63)), DecodeFault::truncated, "fewer than the 64-byte header"));
  EXPECT_TRUE(fails_with(decode_catalog(ByteVector(good.begin(), good.end() - 1)), DecodeFault::truncated, "only 1215 bytes"));
  EXPECT_TRUE(fails_with(poked(0, 0, 4), DecodeFault::bad_magic, "magic 0x0"));
  EXPECT_TRUE(fails_with(poked(4, 9, 1), DecodeFault::unsupported_version, "layout version 9"));
  EXPECT_TRUE(fails_with(poked(6, 32, 2), DecodeFault::bad_length, "header length 32"));
  EXPECT_TRUE(fails_with(poked(16, 100, 4), DecodeFault::bad_length, "entry size 100"));
  EXPECT_TRUE(fails_with(poked(8, 0, 4), DecodeFault::bad_field, "generation 0"));
  EXPECT_TRUE(fails_with(poked(24, 999, 8), DecodeFault::inconsistent, "region length 999"));
  EXPECT_TRUE(fails_with(poked(12, 0xffffffff, 4), DecodeFault::inconsistent, "4294967295 entries"));
  EXPECT_TRUE(fails_with(poked(e1 + 184, 0, 2), DecodeFault::bad_field, "catalog entry 1: name length 0"));
  EXPECT_TRUE(fails_with(poked(e1 + 184, 129, 2), DecodeFault::bad_field, "name length 129 outside 1..128 (layout version 1)"));
  EXPECT_TRUE(fails_with(poked(e1 + 192, '/', 1), DecodeFault::bad_field, "starts with '/'"));
  EXPECT_TRUE(fails_with(poked(e1 + 193, '/', 1), DecodeFault::bad_field, "a name with '/' in a catalog of layout version 1"));
  EXPECT_TRUE(decode_catalog(test::with(good, e1 + 188, 64, 4)).ok());  // reserved before version 3: ignored
  EXPECT_TRUE(fails_with(poked(e1 + 192, 0x01, 1), DecodeFault::bad_field, "control character"));
  EXPECT_TRUE(fails_with(poked(e1 + 0, 1, 8), DecodeFault::inconsistent, "does not match 'sd 480p.ts'"));
  EXPECT_TRUE(fails_with(poked(e1 + 8, 5, 8), DecodeFault::inconsistent, "size 5 but movie region"));
  EXPECT_TRUE(fails_with(poked(e1 + 80, 0x80, 4), DecodeFault::bad_field, "undefined flags 0x80"));
  EXPECT_TRUE(fails_with(poked(e1 + 64, 8, 8), DecodeFault::inconsistent, "has-index flag with an index region of 8"));
  EXPECT_TRUE(fails_with(poked(e1 + 104, 0x07, 1), DecodeFault::bad_field, "non-printable"));
  ByteVector unterminated = good;
  std::fill(unterminated.begin() + e1 + 120, unterminated.begin() + e1 + 136, 'a');  // audio codec, no NUL
  EXPECT_TRUE(fails_with(decode_catalog(unterminated), DecodeFault::bad_field, "unterminated"));
  EXPECT_TRUE(fails_with(poked(e1 + 32, ~0ull, 8), DecodeFault::bad_field, "movie descriptor: addr"));

  Catalog dup = sample();
  dup.entries[1].name = dup.entries[0].name;
  EXPECT_TRUE(fails_with(decode_catalog(encode_catalog(dup)), DecodeFault::inconsistent, "repeats an earlier entry"));
}

TEST(Catalog, EncoderRefusesWhatItCannotPublish) {
  for (const char* bad : {"", ".", "..", "/a", "a/", "a//b", "a/../b", "./a", "tab\there", "Latin-1 \xe9t\xe9.mp4"}) {
    Catalog c = sample();
    c.entries[0].name = bad;
    EXPECT_THROW(encode_catalog(c), std::invalid_argument) << bad;
  }
  Catalog c = sample();
  c.entries[0].name = std::string(256, 'n');  // one file name over Linux's 255
  EXPECT_THROW(encode_catalog(c), std::invalid_argument);
  // Five parts of 204 bytes and four '/': 1024 bytes; one byte more in the first part: 1025.
  std::string longest;
  for (int i = 0; i < 5; ++i) longest.append(i ? 1 : 0, '/').append(204, 'n');
  ASSERT_EQ(longest.size(), 1024u);
  c.entries[0].name = longest;
  EXPECT_NO_THROW(encode_catalog(c));
  c.entries[0].name.insert(0, 1, 'n');
  EXPECT_STREQ(invalid_name_reason(c.entries[0].name), "the name is longer than 1024 bytes");
  EXPECT_THROW(encode_catalog(c), std::invalid_argument);
  c = sample();
  c.entries[0].name = std::string(128, 'n');
  EXPECT_NO_THROW(encode_catalog(c));
  c.entries[0].container = std::string(16, 'c');
  EXPECT_THROW(encode_catalog(c), std::invalid_argument);
  c = sample();
  c.entries[0].flags = 0x10;
  EXPECT_THROW(encode_catalog(c), std::invalid_argument);
  c = sample();
  c.entries[2].flags = kEntryLive;
  c.entries[2].name = "cam/1";  // a live channel's name is flat
  EXPECT_THROW(encode_catalog(c), std::invalid_argument);
}

TEST(Catalog, NamesMayHoldUtf8AndSpaces) {
  EXPECT_EQ(invalid_name_reason("Été à Paris (2024).mkv"), nullptr);
  EXPECT_EQ(invalid_name_reason("Films/Läder (2024)/Läder (2024) - 720p #1 50% ?.mp4"), nullptr);
  EXPECT_EQ(invalid_name_reason(".hidden"), nullptr);  // the scan skips them; the rule does not
  EXPECT_STREQ(invalid_name_reason("a\x7f"), "the name contains a control character");
  EXPECT_STREQ(invalid_name_reason("a\xc0\xaf"
                                   "b"),
               "the name is not UTF-8");                                            // an overlong '/'
  EXPECT_STREQ(invalid_name_reason("a\xed\xa0\x80"), "the name is not UTF-8");      // a surrogate
  EXPECT_STREQ(invalid_name_reason("a\xf4\x90\x80\x80"), "the name is not UTF-8");  // past U+10FFFF
  EXPECT_STREQ(invalid_name_reason("a\xe2\x82"), "the name is not UTF-8");          // cut short
  EXPECT_EQ(invalid_name_reason("\xf0\x9f\x8e\xac"), nullptr);
  EXPECT_STREQ(invalid_channel_name_reason("a/b"), "a channel name contains no '/'");
  EXPECT_STREQ(invalid_channel_name_reason(std::string(129, 'c')), "a channel name is at most 128 bytes");
  EXPECT_EQ(invalid_channel_name_reason("cam 1"), nullptr);
}

// Version 3: names with '/' or over 128 bytes. Short ones stay in the entry; long ones go to the
// names area after the entries, in entry order; a catalog without them stays version 1 or 2.
TEST(Catalog, PathNamesMakeAVersion3CatalogWithANamesArea) {
  Catalog c = sample();
  const std::string longer =
      "Series/Show/Season 01/" + std::string(250, 'x') + "/" + std::string(250, 'y') + "/" + std::string(96, 'z') + ".mkv";
  c.entries[0].name = "Films/Läder (2024)/Läder (2024) - 720p.mp4";
  c.entries[2].name = longer;
  const ByteVector v = encode_catalog(c);
  const std::size_t names = 64 + 3 * 384;
  ASSERT_EQ(v.size(), names + longer.size());
  EXPECT_EQ(v[4], kPathNamesVersion);
  EXPECT_EQ(get_be(v, 20, 4), longer.size());  // names_length
  EXPECT_EQ(get_be(v, 24, 8), v.size());
  const std::size_t e0 = 64, e2 = 64 + 2 * 384;
  EXPECT_EQ(get_be(v, e0 + 188, 4), 0u);  // inline
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(&v[e0 + 192])), c.entries[0].name);
  EXPECT_EQ(get_be(v, e2 + 184, 2), longer.size());
  EXPECT_EQ(get_be(v, e2 + 188, 4), names);
  EXPECT_EQ(v[e2 + 192], 0);  // the inline field stays zero
  EXPECT_EQ(std::string(v.begin() + static_cast<std::ptrdiff_t>(names), v.end()), longer);
  auto d = decode_catalog(v);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(*d, c);

  auto poked = [&](std::size_t at, std::uint64_t value, std::size_t width) { return decode_catalog(test::with(v, at, value, width)); };
  EXPECT_TRUE(fails_with(poked(e0 + 188, names, 4), DecodeFault::inconsistent, "has a names-area offset"));  // a short name
  EXPECT_TRUE(fails_with(poked(e2 + 188, names + 1, 4), DecodeFault::bad_field, "outside the names area"));
  EXPECT_TRUE(fails_with(poked(e2 + 188, 64, 4), DecodeFault::bad_field, "outside the names area"));
  EXPECT_TRUE(fails_with(poked(e2 + 184, 1025, 2), DecodeFault::bad_field, "name length 1025 outside 1..1024 (layout version 3)"));
  EXPECT_TRUE(fails_with(poked(20, longer.size() - 1, 4), DecodeFault::inconsistent, "region length"));
  EXPECT_TRUE(fails_with(poked(20, 3 * 1024 + 1, 4), DecodeFault::bad_length, "a names area of 3073 bytes for 3 entries"));
  EXPECT_TRUE(fails_with(poked(4, 2, 1), DecodeFault::inconsistent, "region length"));  // version 2 has no names area
  EXPECT_EQ(encode_catalog(sample())[4], kLayoutVersion1);
}

// The status words change under a published catalog: the catalog still decodes to the same thing,
// a probe of its 8 bytes reads them back, and a state this client does not know is refused.
TEST(Catalog, ServerStatusWordsChangeWithoutChangingTheCatalog) {
  auto bytes = encode_catalog(sample());
  EXPECT_EQ(*decode_server_status(bytes), ServerStatus{});  // a new catalog: no tick yet, serving
  write_server_status(bytes, {0xA1B2C3D4u, true});
  EXPECT_EQ(get_be(bytes, kServerStatusOffset, 4), 0xA1B2C3D4u);
  EXPECT_EQ(bytes[kServerStatusOffset + 4], kServerDraining);
  ASSERT_TRUE(decode_catalog(bytes));
  EXPECT_EQ(*decode_catalog(bytes), sample());
  EXPECT_EQ(*decode_server_status(bytes), (ServerStatus{0xA1B2C3D4u, true}));
  const std::vector<std::uint8_t> probe(bytes.begin() + kServerStatusOffset, bytes.begin() + kServerStatusOffset + kServerStatusLength);
  EXPECT_EQ(*decode_server_status(probe), (ServerStatus{0xA1B2C3D4u, true}));
  write_server_status(bytes, {7, false});
  EXPECT_EQ(*decode_server_status(bytes), (ServerStatus{7, false}));

  auto unknown = probe;
  unknown[4] = kMaxServerState + 1;
  EXPECT_TRUE(fails_with(decode_server_status(unknown), DecodeFault::bad_field, "state 2"));
  EXPECT_TRUE(fails_with(decode_server_status(std::vector<std::uint8_t>(5)), DecodeFault::truncated, "5 bytes"));
  std::vector<std::uint8_t> short_header(20);
  write_server_status(short_header, {1, true});  // not a catalog: left alone
  EXPECT_EQ(short_header, std::vector<std::uint8_t>(20));
}

}  // namespace
}  // namespace vod::proto
