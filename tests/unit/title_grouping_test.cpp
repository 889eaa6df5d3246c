// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include "titles/language_tags.hpp"
#include "titles/title_grouping.hpp"

namespace vod::server::titles {
namespace {

using media::StreamTrack;

std::vector<std::uint64_t> every_2s(std::size_t n, std::int64_t shift_us = 0) {
  std::vector<std::uint64_t> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(static_cast<std::uint64_t>(static_cast<std::int64_t>(i * 2'000'000) + (i ? shift_us : 0)));
  return out;
}

EntryFacts movie(std::string name, std::uint32_t entry, std::uint64_t bitrate, std::vector<std::uint64_t> keyframes = every_2s(30)) {
  EntryFacts e;
  e.name = std::move(name);
  e.entry = entry;
  e.is_media = true;
  e.indexed = true;
  e.keyframes_us = std::move(keyframes);
  e.bitrate_bps = bitrate;
  e.frame_rate_num = 25;
  e.frame_rate_den = 1;
  return e;
}

EntryFacts file(std::string name, std::uint32_t entry) {
  EntryFacts e;
  e.name = std::move(name);
  e.entry = entry;
  return e;
}

const std::string kDir = "Films/Läder (2024)";
const std::string kBase = kDir + "/Läder (2024)";

std::vector<EntryFacts> ladder() {
  auto top = movie(kBase + " - 1080p.mp4", 2, 5'000'000);
  top.tracks = {{StreamTrack::Kind::audio, 1, "aac", "eng", "", 2, true, false},
                {StreamTrack::Kind::audio, 2, "aac", "ger", "Deutsch", 6, false, false},
                {StreamTrack::Kind::subtitles, 3, "mov_text", "fre", "", 0, false, true},
                {StreamTrack::Kind::subtitles, 4, "hdmv_pgs_subtitle", "spa", "", 0, false, false}};
  return {movie(kBase + " - 480p.mp4", 0, 1'000'000),
          movie(kBase + " - 720p.mp4", 1, 2'500'000, every_2s(30, 30'000)),  // within a frame (40 ms)
          top,
          file(kBase + ".sv.srt", 3),
          file(kBase + " - 720p.pt_br.vtt", 4),
          file(kBase + ".forced.srt", 5),    // not a language: not a track
          file(kBase + ".da.sdh.srt", 9),    // a flag after the language
          file(kBase + " - 4K.en.srt", 6),   // no such rendition
          movie("loose.mp4", 7, 1'000'000),  // not in a folder
          movie("Films/Other/Else - 720p.mp4", 8, 1'000'000, every_2s(10))};
}

TEST(TitleGrouping, ALadderWithTracksAndSidecars) {
  const auto entries = ladder();
  const Grouping g = group_titles(entries);
  ASSERT_EQ(g.titles.size(), 1u);
  EXPECT_TRUE(g.refused.empty());
  const proto::Title& t = g.titles[0];
  EXPECT_EQ(t.name, kDir);
  ASSERT_EQ(t.renditions.size(), 3u);  // highest rate first
  EXPECT_EQ(t.renditions[0], (proto::TitleRendition{2, "1080p", 25, 1}));
  EXPECT_EQ(t.renditions[1].label, "720p");
  EXPECT_EQ(t.renditions[2].label, "480p");
  ASSERT_EQ(t.tracks.size(), 6u);  // two audio, the text subtitle stream, three sidecars; the picture subtitles are not text
  EXPECT_EQ(t.tracks[0], (proto::TitleTrack{proto::TrackKind::audio, true, "en", "aac", "", 2, 1, 2, proto::kAllRenditions}));
  EXPECT_EQ(t.tracks[1].language, "de");
  EXPECT_EQ(t.tracks[1].name, "Deutsch");
  EXPECT_EQ(t.tracks[2], (proto::TitleTrack{proto::TrackKind::subtitles, false, "fr", "mov_text", "", 2, 3, 0, proto::kAllRenditions}));
  EXPECT_EQ(t.tracks[3], (proto::TitleTrack{proto::TrackKind::subtitles, false, "pt-BR", "webvtt", "", 4, proto::kWholeFile, 0, 1}));
  EXPECT_EQ(t.tracks[4].language, "da");
  EXPECT_EQ(t.tracks[5],
            (proto::TitleTrack{proto::TrackKind::subtitles, false, "sv", "subrip", "", 3, proto::kWholeFile, 0, proto::kAllRenditions}));
}

TEST(TitleGrouping, FoldersThatAreNotTitles) {
  struct Case {
    const char* what;
    std::vector<EntryFacts> entries;
    std::string refused;  // "" when the folder is simply not a title
  };
  auto late = movie(kBase + " - 720p.mp4", 1, 2'000'000, every_2s(30, 0));
  late.keyframes_us[12] += 2'000'000;
  auto pending = movie(kBase + " - 720p.mp4", 1, 2'000'000);
  pending.indexed = false;
  pending.keyframes_us.clear();
  auto audio_only = movie(kBase + " - audio.m4a", 1, 128'000, {});
  auto not_media = movie(kBase + " - notes.txt", 1, 0);
  not_media.is_media = false;
  const std::vector<Case> cases = {
      {"keyframes 2 s apart at keyframe 12", {movie(kBase + " - 1080p.mp4", 0, 5'000'000), late}, "keyframe 12 is at 24.000 s"},
      {"a frame and a bit apart",
       {movie(kBase + " - 1080p.mp4", 0, 5'000'000), movie(kBase + " - 720p.mp4", 1, 1, every_2s(30, 41'000))},
       "keyframe 1 is at 2.000 s"},
      {"one more keyframe",
       {movie(kBase + " - 1080p.mp4", 0, 5'000'000), movie(kBase + " - 720p.mp4", 1, 1, every_2s(31))},
       "has 30 keyframes and"},
      {"a rendition not indexed yet", {movie(kBase + " - 1080p.mp4", 0, 5'000'000), pending}, "not indexed yet"},
      {"a rendition without video", {movie(kBase + " - 1080p.mp4", 0, 5'000'000), audio_only}, "no video keyframes"},
      {"files not named after the folder", {movie(kDir + "/Other - 1080p.mp4", 0, 1), movie(kDir + "/Läder - 720p.mp4", 1, 1)}, ""},
      {"no ' - LABEL'", {movie(kBase + ".mp4", 0, 1), movie(kBase + " -720p.mp4", 1, 1), movie(kBase + " - .mp4", 2, 1)}, ""},
      {"a label with a dot or too long",
       {movie(kBase + " - 7.2.mp4", 0, 1), movie(kBase + " - " + std::string(32, 'x') + ".mp4", 1, 1)},
       ""},
      {"a label file that is not media", {not_media}, ""},
      {"sidecars alone", {file(kBase + ".en.srt", 0)}, ""},
  };
  for (const Case& c : cases) {
    const Grouping g = group_titles(c.entries);
    const bool one_rendition_left = c.refused.empty() && !g.titles.empty();
    EXPECT_TRUE(g.titles.empty() || one_rendition_left) << c.what;
    if (c.refused.empty()) {
      EXPECT_TRUE(g.refused.empty()) << c.what;
      EXPECT_TRUE(g.titles.empty()) << c.what << ": " << g.titles[0].renditions[0].label;
    } else {
      ASSERT_EQ(g.refused.size(), 1u) << c.what;
      EXPECT_EQ(g.refused[0].first, kDir) << c.what;
      EXPECT_NE(g.refused[0].second.find(c.refused), std::string::npos) << c.what << ": " << g.refused[0].second;
    }
  }
}

TEST(TitleGrouping, OnlyFilesNamedAfterTheirFolderCanBeInATitle) {
  for (const char* yes : {"A/A - 720p.mp4", "x/A/A.en.srt", "A/A.mp4", "A/Ab.mkv"}) EXPECT_TRUE(could_be_in_title(yes)) << yes;
  for (const char* no : {"A - 720p.mp4", "B/A - 720p.mp4", "A/a - 720p.mp4", "A/ A.mp4"}) EXPECT_FALSE(could_be_in_title(no)) << no;
}

TEST(TitleGrouping, OneRenditionIsATitleAndTitlesAreSorted) {
  const std::vector<EntryFacts> entries = {movie("b/b - hd.mkv", 0, 1), movie("a/a - hd.mkv", 1, 1), movie("a/b/b - hd.ts", 2, 1)};
  const Grouping g = group_titles(entries);
  ASSERT_EQ(g.titles.size(), 3u);
  EXPECT_EQ(g.titles[0].name, "a");
  EXPECT_EQ(g.titles[1].name, "a/b");
  EXPECT_EQ(g.titles[2].name, "b");
}

TEST(LanguageTags, NormalisedToBcp47) {
  const std::vector<std::pair<const char*, const char*>> table = {
      {"eng", "en"},        {"en", "en"},   {"EN", "en"},       {"ger", "de"},      {"deu", "de"},
      {"fre", "fr"},        {"chi", "zh"},  {"pt-br", "pt-BR"}, {"pt_BR", "pt-BR"}, {"zh-hant-tw", "zh-Hant-TW"},
      {"es-419", "es-419"}, {"fil", "fil"}, {"tgl", "tl"},      {"und", ""},        {"", ""},
      {"yue", "yue"},  // no two-letter code: kept
  };
  for (const auto& [in, want] : table) {
    const auto got = normalize_language(in);
    ASSERT_TRUE(got.has_value()) << in;
    EXPECT_EQ(*got, want) << in;
  }
  for (const char* bad : {"forced", "english", "e", "en-", "1080p"}) EXPECT_FALSE(normalize_language(bad).has_value()) << bad;
}

}  // namespace
}  // namespace vod::server::titles
