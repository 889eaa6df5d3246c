// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include <stdexcept>

#include "vod/protocol/catalog_layout.hpp"
#include "wire_test_support.hpp"

namespace vod::proto {
namespace {

using test::ByteVector;
using test::fails_with;
using test::get_be;
using test::put_be;

CatalogEntry movie(const std::string& name, std::uint64_t base) {
  CatalogEntry e;
  e.name = name;
  e.size = 1000;
  e.movie = {base, 1000, 7};
  e.flags = kEntryIsMedia;
  e.mime_type = "video/mp4";
  return e;
}

Catalog with_title() {
  Catalog c;
  c.generation = 3;
  c.entries.push_back(movie("Films/Läder (2024)/Läder (2024) - 1080p.mp4", 0x1000));
  c.entries.push_back(movie("Films/Läder (2024)/Läder (2024) - 720p.mp4", 0x2000));
  c.entries.push_back(movie("Films/Läder (2024)/Läder (2024).de.srt", 0x3000));
  c.entries.push_back(movie("loose.mp4", 0x4000));
  Title t;
  t.name = "Films/Läder (2024)";
  t.renditions = {{0, "1080p", 25, 1}, {1, "720p", 30000, 1001}};
  TitleTrack en{TrackKind::audio, true, "en", "aac", "English", 0, 1, 2, kAllRenditions};
  TitleTrack sv{TrackKind::audio, false, "sv", "aac", "Svenska – kommentar", 0, 2, 6, kAllRenditions};
  TitleTrack de{TrackKind::subtitles, false, "de", "subrip", "", 2, kWholeFile, 0, kAllRenditions};
  TitleTrack one{TrackKind::subtitles, false, "pt-BR", "subrip", "", 2, kWholeFile, 0, 1};
  t.tracks = {en, sv, de, one};
  c.titles.push_back(t);
  return c;
}

TEST(CatalogTitles, RoundTripInVersion4) {
  const Catalog c = with_title();
  const ByteVector v = encode_catalog(c);
  EXPECT_EQ(v[4], kTitlesVersion);
  const std::size_t titles_length = get_be(v, 40, 4);
  // header, 2 renditions, 4 tracks, the name
  EXPECT_EQ(titles_length, 16u + 32 + 2 * 48 + 4 * 96 + std::string("Films/Läder (2024)").size());
  EXPECT_EQ(get_be(v, 24, 8), v.size());
  auto back = decode_catalog(v);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, c);
}

TEST(CatalogTitles, NoTitlesNoVersion4) {
  Catalog c = with_title();
  c.titles.clear();
  const ByteVector v = encode_catalog(c);
  EXPECT_EQ(v[4], kPathNamesVersion);
  EXPECT_EQ(get_be(v, 40, 4), 0u);
}

TEST(CatalogTitles, EncoderRefusesWhatCannotBePublished) {
  auto refuses = [](auto change) {
    Catalog c = with_title();
    change(c.titles[0]);
    EXPECT_THROW(encode_catalog(c), std::invalid_argument);
  };
  refuses([](Title& t) { t.renditions.clear(); });
  refuses([](Title& t) { t.renditions[1].entry = 9; });
  refuses([](Title& t) { t.renditions[1].label = "1080p"; });
  refuses([](Title& t) { t.renditions[0].label = ""; });
  refuses([](Title& t) { t.renditions[0].frame_rate_den = 0; });
  refuses([](Title& t) { t.tracks[0].language = "english!"; });
  refuses([](Title& t) { t.tracks[0].language = "e"; });
  refuses([](Title& t) { t.tracks[0].stream = kWholeFile; });
  refuses([](Title& t) { t.tracks[3].rendition = 3; });
  refuses([](Title& t) { t.tracks[1].name = "bad\x01"; });
  refuses([](Title& t) { t.name = "Films//x"; });
  Catalog twice = with_title();
  twice.titles.push_back(twice.titles[0]);
  EXPECT_THROW(encode_catalog(twice), std::invalid_argument);
  Catalog live = with_title();
  live.entries[1].flags = kEntryLive;
  EXPECT_THROW(encode_catalog(live), std::invalid_argument);
}

TEST(CatalogTitles, DecoderRefusesHostileAreas) {
  const ByteVector good = encode_catalog(with_title());
  const std::size_t titles_at = good.size() - get_be(good, 40, 4);
  {
    ByteVector v = good;
    v[4] = kPathNamesVersion;  // a version-3 reader counts no titles area: the lengths disagree
    EXPECT_TRUE(fails_with(decode_catalog(v), DecodeFault::inconsistent, "region length"));
  }
  {
    ByteVector v = good;
    put_be(v, titles_at, 2, 4);  // two titles in an area for one
    EXPECT_TRUE(fails_with(decode_catalog(v), DecodeFault::inconsistent, "do not make the area"));
  }
  {
    ByteVector v = good;
    put_be(v, titles_at + 16, 0, 4);  // the name's offset inside the header
    EXPECT_TRUE(fails_with(decode_catalog(v), DecodeFault::bad_field, "outside the names"));
  }
  {
    ByteVector v = good;
    put_be(v, titles_at + 16 + 10, 3, 2);  // three renditions where there are two
    EXPECT_TRUE(fails_with(decode_catalog(v), DecodeFault::bad_field, "run past"));
  }
  {
    ByteVector v = good;
    put_be(v, titles_at + 16 + 32, 4, 4);  // a rendition's entry past the catalog's four
    EXPECT_TRUE(fails_with(decode_catalog(v), DecodeFault::bad_field, "past the catalog"));
  }
  {
    ByteVector v = good;
    v[titles_at + 16 + 32 + 2 * 48] = 9;  // a track of an unknown kind
    EXPECT_TRUE(fails_with(decode_catalog(v), DecodeFault::bad_field, "unknown kind"));
  }
  {
    ByteVector v = good;
    put_be(v, 40, 0, 4);  // version 4 with no titles area
    EXPECT_TRUE(fails_with(decode_catalog(v), DecodeFault::inconsistent, "without a titles area"));
  }
}

TEST(CatalogTitles, LanguageTags) {
  for (const char* ok : {"en", "eng", "pt-BR", "zh-Hant-TW", "sr-Latn", "es-419"}) EXPECT_EQ(invalid_language_reason(ok), nullptr) << ok;
  for (const char* bad : {"", "e", "english", "en-", "en--US", "1a", "en_US", "-en", "abcd-efghijklmno"})
    EXPECT_NE(invalid_language_reason(bad), nullptr) << bad;
}

}  // namespace
}  // namespace vod::proto
