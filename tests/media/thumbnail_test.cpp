// SPDX-License-Identifier: LGPL-2.1-or-later
// Thumbnails from the keyframe index: every container decodes at the keyframe nearest 10%, the
// JPEG decodes with ffprobe at the expected size, only part of the movie is read, and damaged or
// unreadable movies give a clear ThumbnailError (the proxy then serves the placeholder).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <random>

#include "ffprobe_reference.hpp"
#include "vod/media/mapped_file.hpp"
#include "vod/media/probe.hpp"
#include "vod/media/thumbnail.hpp"

namespace vod::media {
namespace {

using test::media_path;

// What ffprobe reads off a JPEG: "codec,width,height".
std::string ffprobe_image(const std::vector<std::uint8_t>& jpeg) {
  char name[] = "/tmp/vod-thumb-XXXXXX";
  const int fd = mkstemp(name);
  if (fd < 0) throw std::runtime_error("mkstemp failed");
  close(fd);
  std::ofstream(name, std::ios::binary).write(reinterpret_cast<const char*>(jpeg.data()), static_cast<std::streamsize>(jpeg.size()));
  std::string out = test::run(std::string("ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 ") + name);
  std::remove(name);
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

// The keyframe nearest 10% into the movie, as the proxy picks it.
FramePosition tenth(Bytes bytes, const std::string& name) {
  const MediaInfo info = probe(bytes, name);
  const proto::KeyframeIndex index = index_keyframes(bytes, info);
  const proto::Keyframe* k = index.at_or_before(info.duration_us / 10);
  if (!k) throw std::runtime_error(name + " has no keyframes");
  return {k->time_us, k->offset};
}

struct Case {
  const char* file;
  unsigned height;  // of the 320-wide thumbnail
  bool big;         // large enough that reading less than half of it says something
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.file; }

class ThumbnailPerContainer : public ::testing::TestWithParam<Case> {};

TEST_P(ThumbnailPerContainer, DecodesTheKeyframeAtTenPercentReadingOnlyPartOfTheMovie) {
  const Case& c = GetParam();
  MappedFile file(media_path(c.file));
  const FramePosition at = tenth(file.bytes(), c.file);
  ASSERT_GT(at.time_us, 0u);
  std::uint64_t bytes_read = 0;
  auto read_at = [&](std::uint64_t offset, std::span<std::uint8_t> dest) -> std::size_t {
    const auto all = file.bytes();
    if (offset >= all.size()) return 0;
    const std::size_t n = std::min<std::size_t>(dest.size(), all.size() - offset);
    std::copy_n(all.data() + offset, n, dest.data());
    bytes_read += n;
    return n;
  };
  const Thumbnail t = make_thumbnail(file.bytes().size(), read_at, at);
  EXPECT_EQ(t.width, 320u);
  EXPECT_EQ(t.height, c.height);  // the frame's display aspect, rounded to even
  EXPECT_EQ(ffprobe_image(t.jpeg), "mjpeg,320," + std::to_string(c.height));
  // The decoded frame is the indexed keyframe itself: its time is what ffprobe says of the
  // keyframe packet at that byte offset.
  bool found = false;
  for (const auto& k : test::ffprobe_keyframes(media_path(c.file)))
    if (k.pos == *at.byte_offset) {
      found = true;
      EXPECT_EQ(t.pts_us, k.pts_us);
    }
  EXPECT_TRUE(found) << "ffprobe lists no keyframe at byte " << *at.byte_offset;
  if (c.big) {
    EXPECT_LT(bytes_read, file.bytes().size() / 2) << "a thumbnail must not read the whole movie";
  }
}

INSTANTIATE_TEST_SUITE_P(Containers, ThumbnailPerContainer,
                         ::testing::Values(Case{"test-480p-60s.ts", 180, true}, Case{"test-480p-60s.mp4", 180, true},
                                           Case{"test-480p-60s.faststart.mp4", 180, true}, Case{"test-480p-60s.mkv", 180, true},
                                           Case{"small.webm", 240, false}),
                         [](const auto& param_info) {
                           std::string n = param_info.param.file;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(Thumbnail, WithoutAPositionTheFirstFrame) {
  MappedFile file(media_path("test-480p-60s.mp4"));
  const Thumbnail t = make_thumbnail(file.bytes(), std::nullopt);
  EXPECT_EQ(t.pts_us, 0);
  EXPECT_EQ(ffprobe_image(t.jpeg), "mjpeg,320,180");
}

TEST(Thumbnail, DamagedPicturesAreAnErrorNotAnImage) {
  // The header intact (moov first), every byte of picture data from the first keyframe on random.
  MappedFile file(media_path("test-480p-60s.faststart.mp4"));
  std::vector<std::uint8_t> bytes(file.bytes().begin(), file.bytes().end());
  const MediaInfo info = probe(file.bytes(), "faststart");
  const proto::KeyframeIndex index = index_keyframes(file.bytes(), info);
  ASSERT_FALSE(index.entries.empty());
  std::mt19937 random(7);
  for (std::size_t i = index.entries.front().offset; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(random());
  try {
    make_thumbnail(bytes, FramePosition{index.entries.front().time_us, std::nullopt});
    FAIL() << "random picture data gave a thumbnail";
  } catch (const ThumbnailError& e) {
    EXPECT_NE(std::string(e.what()), "") << e.what();
  }
}

TEST(Thumbnail, NotMediaAndNoVideoSayWhy) {
  MappedFile garbage(media_path("garbage.bin"));
  EXPECT_THROW(make_thumbnail(garbage.bytes(), std::nullopt), ThumbnailError);
  const std::vector<std::uint8_t> empty;
  EXPECT_THROW(make_thumbnail(empty, std::nullopt), ThumbnailError);
}

TEST(Thumbnail, AReadFailureIsReportedWithItsText) {
  MappedFile file(media_path("test-480p-60s.mp4"));  // moov at the end: the demuxer must read there
  auto read_at = [&](std::uint64_t offset, std::span<std::uint8_t> dest) -> std::size_t {
    if (offset > file.bytes().size() / 2) throw std::runtime_error("the server went away");
    const std::size_t n = std::min<std::size_t>(dest.size(), file.bytes().size() - offset);
    std::copy_n(file.bytes().data() + offset, n, dest.data());
    return n;
  };
  try {
    make_thumbnail(file.bytes().size(), read_at, FramePosition{6'000'000, std::nullopt});
    FAIL() << "a failing read gave a thumbnail";
  } catch (const ThumbnailError& e) {
    EXPECT_NE(std::string(e.what()).find("the server went away"), std::string::npos) << e.what();
  }
}

TEST(Thumbnail, PlaceholderIsAJpegOfTheAskedSize) {
  EXPECT_EQ(ffprobe_image(placeholder_jpeg(320, 180)), "mjpeg,320,180");
  EXPECT_EQ(ffprobe_image(placeholder_jpeg(161, 91)), "mjpeg,160,90");
}

}  // namespace
}  // namespace vod::media
