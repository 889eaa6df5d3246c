// SPDX-License-Identifier: LGPL-2.1-or-later
// What vod-proxy's HLS reads from movie bytes (media/stream_codecs.hpp, media/fmp4_remux.hpp), on the
// generated media against ffprobe and ffmpeg: the SPS and AAC fields the CODECS attribute is made
// of, and fMP4 segments whose init and fragments, put together, hold the file's packets one for one
// (and the same segments as MPEG-TS, which decode to the file's frames).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <limits>

#include "ffprobe_reference.hpp"
#include "vod/media/fmp4_remux.hpp"
#include "vod/media/mapped_file.hpp"
#include "vod/media/probe.hpp"
#include "vod/media/stream_codecs.hpp"

namespace vod::media {
namespace {

using test::media_path;

ReadBytesAt reader(Bytes bytes) {
  return [bytes](std::uint64_t offset, std::span<std::uint8_t> dest) -> std::size_t {
    if (offset >= bytes.size()) return 0;
    const std::size_t n = std::min<std::size_t>(dest.size(), bytes.size() - offset);
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(offset), n, dest.begin());
    return n;
  };
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ',')) s.pop_back();
  return s;
}

TEST(AvcParameters, FromAnAvcCRecordAndFromAnnexB) {
  const std::vector<std::uint8_t> avcc = {1, 0x64, 0x00, 0x1f, 0xff, 0xe1};
  EXPECT_EQ(avc_parameters(avcc), (AvcParameters{100, 0, 31}));
  const std::vector<std::uint8_t> annex_b = {0, 0, 0, 1, 0x09, 0xf0, 0, 0, 1, 0x67, 0x42, 0xc0, 0x1e, 0x95};
  EXPECT_EQ(avc_parameters(annex_b), (AvcParameters{66, 0xc0, 30}));
  const std::vector<std::uint8_t> no_sps = {0, 0, 1, 0x68, 0xce, 0x38, 0x80};
  EXPECT_EQ(avc_parameters(no_sps), std::nullopt);
  EXPECT_EQ(avc_parameters({}), std::nullopt);
}

class CodecsPerContainer : public ::testing::TestWithParam<const char*> {};

TEST_P(CodecsPerContainer, AgreeWithFfprobe) {
  const std::string file = media_path(GetParam());
  MappedFile movie(file);
  const StreamCodecs c = stream_codecs(movie.bytes().size(), reader(movie.bytes()));
  ASSERT_TRUE(c.avc) << c.note;
  const std::string want =
      trimmed(test::run("ffprobe -v error -select_streams v:0 -show_entries stream=profile,level -of csv=p=0 " + file + " | sed -n 1p"));
  const std::string profile = want.substr(0, want.find(','));
  EXPECT_EQ(c.avc->profile_idc, profile == "High" ? 100u : profile == "Main" ? 77u : 66u) << want;
  EXPECT_EQ(std::to_string(c.avc->level_idc), want.substr(want.find(',') + 1)) << want;
  ASSERT_TRUE(c.aac_object_type);
  EXPECT_EQ(*c.aac_object_type, 2u);  // ffmpeg's AAC encoder: LC
  EXPECT_EQ(c.video_codec, "h264");
  EXPECT_EQ(c.audio_codec, "aac");
}
INSTANTIATE_TEST_SUITE_P(Containers, CodecsPerContainer,
                         ::testing::Values("test-480p-60s.ts", "test-480p-60s.mp4", "test-480p-60s.mkv", "test-480p-60s.fragmented.mp4"));

TEST(StreamCodecs, GarbageSaysWhyAndKnowsNothing) {
  const std::vector<std::uint8_t> garbage(100000, 0x5a);
  const StreamCodecs c = stream_codecs(garbage.size(), reader(garbage));
  EXPECT_FALSE(c.avc);
  EXPECT_FALSE(c.aac_object_type);
  EXPECT_NE(c.note.find("could not be read"), std::string::npos) << c.note;
}

class Fmp4PerContainer : public ::testing::TestWithParam<const char*> {};

// Segments of two keyframes each, every one made on its own, then put together behind the init.
TEST_P(Fmp4PerContainer, SegmentsTogetherHoldTheFilesPacketsOneForOne) {
  const std::string file = media_path(GetParam());
  MappedFile movie(file);
  const Bytes bytes = movie.bytes();
  const proto::KeyframeIndex index = index_keyframes(bytes, probe(bytes, GetParam()));
  ASSERT_GE(index.entries.size(), 10u);
  std::vector<std::uint8_t> out = fmp4_init_segment(bytes.size(), reader(bytes));
  ASSERT_GT(out.size(), 100u);
  unsigned sequence = 0;
  for (std::size_t k = 0; k < index.entries.size(); k += 2, ++sequence) {
    const std::uint64_t start = index.entries[k].time_us;
    const std::uint64_t end = k + 2 < index.entries.size() ? index.entries[k + 2].time_us : std::numeric_limits<std::uint32_t>::max();
    const std::vector<std::uint8_t> s = fmp4_media_segment(bytes.size(), reader(bytes), start, end, sequence);
    ASSERT_GT(s.size(), 8u);
    EXPECT_EQ(std::string(s.begin() + 4, s.begin() + 8), "moof") << "segment " << sequence;
    out.insert(out.end(), s.begin(), s.end());
  }
  // One file per movie and process: ctest runs the containers' cases side by side.
  const std::string joined = ::testing::TempDir() + "/fmp4-joined-" + std::to_string(getpid()) + "-" + GetParam() + ".mp4";
  std::ofstream(joined, std::ios::binary).write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  // Video packets byte for byte (their md5, in order); audio as many.
  const std::string packets = " -c copy -f framemd5 - | awk -F, '/^0,/ { print $6 }' | md5sum";
  EXPECT_EQ(test::run("ffmpeg -v error -i " + joined + " -map 0:v" + packets),
            test::run("ffmpeg -v error -i " + file + " -map 0:v" + packets));
  const std::string audio = " -select_streams a:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 ";
  EXPECT_EQ(trimmed(test::run("ffprobe -v error" + audio + joined + " | sed -n 1p")),
            trimmed(test::run("ffprobe -v error" + audio + file + " | sed -n 1p")));
  std::remove(joined.c_str());
}
// The same segments as MPEG-TS (a title played over one-sided Reads, client/title_reader.hpp),
// each made on its own and simply concatenated: the video decodes to the file's frames, one for
// one (the parameter sets before each keyframe), with the file's audio packets.
class TsSegmentsPerContainer : public ::testing::TestWithParam<const char*> {};

TEST_P(TsSegmentsPerContainer, DecodeToTheFilesFrames) {
  const std::string file = media_path(GetParam());
  MappedFile movie(file);
  const Bytes bytes = movie.bytes();
  const proto::KeyframeIndex index = index_keyframes(bytes, probe(bytes, GetParam()));
  ASSERT_GE(index.entries.size(), 10u);
  std::vector<std::uint8_t> out;
  unsigned sequence = 0;
  for (std::size_t k = 0; k < index.entries.size(); k += 2, ++sequence) {
    const std::uint64_t start = index.entries[k].time_us;
    const std::uint64_t end = k + 2 < index.entries.size() ? index.entries[k + 2].time_us : std::numeric_limits<std::uint32_t>::max();
    const std::vector<std::uint8_t> s = mpegts_media_segment(bytes.size(), reader(bytes), start, end, sequence);
    ASSERT_GE(s.size(), 188u);
    EXPECT_EQ(s.size() % 188, 0u) << "segment " << sequence;
    EXPECT_EQ(s[0], 0x47) << "segment " << sequence;
    out.insert(out.end(), s.begin(), s.end());
  }
  const std::string joined = ::testing::TempDir() + "/ts-joined-" + std::to_string(getpid()) + "-" + GetParam() + ".ts";
  std::ofstream(joined, std::ios::binary).write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  const std::string frames = " -map 0:v -f framemd5 - | awk -F, '/^0,/ { print $6 }' | md5sum";
  EXPECT_EQ(test::run("ffmpeg -v error -i " + joined + frames), test::run("ffmpeg -v error -i " + file + frames));
  const std::string audio = " -select_streams a:0 -count_packets -show_entries stream=nb_read_packets -of csv=p=0 ";
  EXPECT_EQ(trimmed(test::run("ffprobe -v error" + audio + joined + " | sed -n 1p")),
            trimmed(test::run("ffprobe -v error" + audio + file + " | sed -n 1p")));
  std::remove(joined.c_str());
}
INSTANTIATE_TEST_SUITE_P(Containers, TsSegmentsPerContainer, ::testing::Values("test-480p-60s.mp4", "test-480p-60s.mkv"));
INSTANTIATE_TEST_SUITE_P(Containers, Fmp4PerContainer,
                         ::testing::Values("test-480p-60s.mp4", "test-480p-60s.mkv", "test-480p-60s.fragmented.mp4"));

TEST(Fmp4, BadInputIsAnErrorThatSaysWhy) {
  const std::vector<std::uint8_t> garbage(100000, 0x5a);
  try {
    (void)fmp4_init_segment(garbage.size(), reader(garbage));
    FAIL() << "garbage remuxed";
  } catch (const Fmp4Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be opened"), std::string::npos) << e.what();
  }
  MappedFile movie(media_path("test-480p-60s.mp4"));
  // Past the movie's end there is no keyframe to start at.
  EXPECT_THROW((void)fmp4_media_segment(movie.bytes().size(), reader(movie.bytes()), 3'600'000'000ull, 3'604'000'000ull, 0), Fmp4Error);
}

}  // namespace
}  // namespace vod::media
