// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "vod/media/subtitles.hpp"

namespace vod::media {
namespace {

std::vector<Cue> cues_of(const std::string& file, int stream = -1) {
  return read_cues(
      file.size(),
      [&](std::uint64_t off, std::span<std::uint8_t> dest) -> std::size_t {
        if (off >= file.size()) return 0;
        const std::size_t n = std::min<std::size_t>(dest.size(), file.size() - off);
        std::memcpy(dest.data(), file.data() + off, n);
        return n;
      },
      stream);
}

std::span<const std::uint8_t> bytes(const std::string& s) { return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()}; }

TEST(Subtitles, SrtAndWebVttFiles) {
  const std::string srt =
      "1\r\n00:00:01,000 --> 00:00:02,500\r\nHello <i>there</i>\r\n\r\n2\r\n00:01:00,000 --> 00:01:03,000\r\nTwo\r\nlines\r\n\r\n";
  EXPECT_EQ(cues_of(srt), (std::vector<Cue>{{1'000'000, 2'500'000, "Hello <i>there</i>"}, {60'000'000, 63'000'000, "Two\nlines"}}));
  const std::string vtt = "WEBVTT\n\n00:00:05.000 --> 00:00:06.000\nHej\n\nid\n00:00:07.000 --> 00:00:08.250 align:start\nDå\n";
  EXPECT_EQ(cues_of(vtt), (std::vector<Cue>{{5'000'000, 6'000'000, "Hej"}, {7'000'000, 8'250'000, "Då"}}));
  EXPECT_THROW(cues_of("not subtitles at all, just words\n"), SubtitleError);
  EXPECT_THROW(cues_of(srt, 3), SubtitleError);
}

TEST(Subtitles, CueTextIsSafeForWebVtt) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"plain", "plain"},
      {"a\r\n\r\n\r\nb\n", "a\nb"},  // no blank line inside a cue
      {"{\\an8}top", "top"},         // ASS override blocks go
      {"x --> y", "x --&gt; y"},     // no cue timing line inside a cue
      {std::string("bad \xff\xfe utf8"), "bad \xef\xbf\xbd\xef\xbf\xbd utf8"},
      {std::string("nul\0here", 8), "nul here"},
      {"\n\n", ""},
  };
  for (const auto& [in, want] : table) EXPECT_EQ(cue_text("subrip", bytes(in)), want) << in;
  EXPECT_EQ(cue_text("mov_text", bytes(std::string("\x00\x05Hello+styl-box", 15))), "Hello");
  EXPECT_EQ(cue_text("mov_text", bytes(std::string("\x00\x40short", 7))), "short");  // a length past the packet
  EXPECT_EQ(cue_text("mov_text", bytes(std::string("\x01", 1))), "");
}

TEST(Subtitles, WebVttSegmentsHoldTheCuesThatOverlapThem) {
  const std::vector<Cue> cues = {{1'000'000, 2'000'000, "a"}, {3'500'000, 4'500'000, "b"}, {9'000'000, 9'500'000, "c"}};
  EXPECT_EQ(
      webvtt_segment(cues, 0, 4'000'000, 900000),
      "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n\n00:00:01.000 --> 00:00:02.000\na\n\n00:00:03.500 --> 00:00:04.500\nb\n");
  EXPECT_EQ(webvtt_segment(cues, 4'000'000, 8'000'000, 900000),
            "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:900000,LOCAL:00:00:00.000\n\n00:00:03.500 --> 00:00:04.500\nb\n");
  EXPECT_EQ(webvtt_segment({}, 0, 4'000'000, 0), "WEBVTT\nX-TIMESTAMP-MAP=MPEGTS:0,LOCAL:00:00:00.000\n");
}

}  // namespace
}  // namespace vod::media
