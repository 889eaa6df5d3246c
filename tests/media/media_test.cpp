#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "ffprobe_reference.hpp"
#include "vod/media/mapped_file.hpp"
#include "vod/media/probe.hpp"
#include "vod/media/remux.hpp"
#include "vod/media/ts_scanner.hpp"

namespace vod::media {
namespace {

using test::ffprobe_keyframes;
using test::ffprobe_start_us;

using test::media_path;

struct Expectation {
  const char* file;
  const char* container;
  const char* mime;
  const char* video;
  const char* audio;
  std::uint16_t index_flags;
};

void PrintTo(const Expectation& e, std::ostream* os) { *os << e.file; }

class IndexPerContainer : public ::testing::TestWithParam<Expectation> {};

TEST_P(IndexPerContainer, ProbeReportsTheContainer) {
  const Expectation& e = GetParam();
  MappedFile file(media_path(e.file));
  const MediaInfo info = probe(file.bytes(), e.file);
  EXPECT_TRUE(info.is_media) << info.note;
  EXPECT_EQ(info.container, e.container);
  EXPECT_EQ(info.mime_type, e.mime);
  EXPECT_EQ(info.video_codec, e.video);
  EXPECT_EQ(info.audio_codec, e.audio);
  EXPECT_GT(info.width, 0);
  EXPECT_GT(info.height, 0);
  const double seconds = std::stod(test::run("ffprobe -v error -show_entries format=duration -of csv=p=0 '" + media_path(e.file) + "'"));
  EXPECT_NEAR(static_cast<double>(info.duration_us) / 1e6, seconds, 0.001);
  EXPECT_NEAR(static_cast<double>(info.bitrate_bps), static_cast<double>(file.bytes().size()) * 8 / seconds, 1000.0);
}

TEST_P(IndexPerContainer, IndexAgreesWithFfprobePackets) {
  const Expectation& e = GetParam();
  MappedFile file(media_path(e.file));
  const MediaInfo info = probe(file.bytes(), e.file);
  std::vector<std::uint64_t> progress;
  const auto index = index_keyframes(file.bytes(), info, [&](std::uint64_t done, std::uint64_t total) {
    EXPECT_EQ(total, file.bytes().size());
    progress.push_back(done);
  });
  const auto reference = ffprobe_keyframes(media_path(e.file));
  const std::int64_t start = ffprobe_start_us(media_path(e.file));
  ASSERT_GE(reference.size(), 5u);
  ASSERT_EQ(index.entries.size(), reference.size());
  for (std::size_t i = 0; i < reference.size(); ++i) {
    EXPECT_EQ(index.entries[i].offset, reference[i].pos) << "keyframe " << i;
    EXPECT_NEAR(static_cast<double>(index.entries[i].time_us), static_cast<double>(std::max<std::int64_t>(reference[i].pts_us - start, 0)),
                1.0)
        << "keyframe " << i;
  }
  EXPECT_EQ(index.flags, e.index_flags);
  EXPECT_EQ(index.movie_size, file.bytes().size());
  ASSERT_FALSE(progress.empty());
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  EXPECT_EQ(progress.back(), file.bytes().size());
  // The index encodes into the protocol layout clients read by RDMA.
  EXPECT_EQ(*proto::decode_index(proto::encode_index(index)), index);
}

TEST_P(IndexPerContainer, TimeSeekPicksTheLastKeyframeAtOrBeforeT) {
  const Expectation& e = GetParam();
  MappedFile file(media_path(e.file));
  const auto index = index_keyframes(file.bytes(), probe(file.bytes(), e.file));
  const auto reference = ffprobe_keyframes(media_path(e.file));
  const std::int64_t start = ffprobe_start_us(media_path(e.file));
  ASSERT_FALSE(reference.empty());
  const std::uint64_t last = static_cast<std::uint64_t>(reference.back().pts_us - start);
  for (std::uint64_t t : {std::uint64_t{0}, std::uint64_t{1'500'000}, std::uint64_t{30'000'000}, last}) {
    // The reference answer, computed from ffprobe alone.
    const test::ReferenceKeyframe* want = &reference.front();
    for (const auto& k : reference)
      if (k.pts_us - start <= static_cast<std::int64_t>(t)) want = &k;
    const proto::Keyframe* got = index.at_or_before(t);
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->offset, want->pos) << "t = " << t << " us";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Containers, IndexPerContainer,
    ::testing::Values(Expectation{"test-480p-60s.ts", "mpegts", "video/mp2t", "h264", "aac", proto::kIndexDirectEntry},
                      Expectation{"test-480p-60s.mp4", "mp4", "video/mp4", "h264", "aac", proto::kIndexNeedsHeader},
                      Expectation{"test-480p-60s.faststart.mp4", "mp4", "video/mp4", "h264", "aac", proto::kIndexNeedsHeader},
                      Expectation{"test-480p-60s.fragmented.mp4", "mp4", "video/mp4", "h264", "aac", proto::kIndexNeedsHeader},
                      Expectation{"test-480p-60s.mkv", "matroska", "video/x-matroska", "h264", "aac", proto::kIndexNeedsHeader},
                      Expectation{"small.webm", "webm", "video/webm", "vp9", "opus", proto::kIndexNeedsHeader}),
    [](const auto& param_info) {
      std::string n = param_info.param.file;
      std::replace_if(
          n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
      return n;
    });

TEST(Probe, FragmentedMp4IsRecognised) {
  MappedFile fragmented(media_path("test-480p-60s.fragmented.mp4"));
  MappedFile progressive(media_path("test-480p-60s.mp4"));
  EXPECT_TRUE(probe(fragmented.bytes(), "f").fragmented);
  EXPECT_FALSE(probe(progressive.bytes(), "p").fragmented);
}

// Decoding an MPEG-TS from a keyframe's byte offset, with nothing before it, starts at that keyframe.
TEST(Index, MpegTsOffsetsAreDirectEntryPoints) {
  const std::string ts = media_path("test-480p-60s.ts");
  MappedFile file(ts);
  const auto index = index_keyframes(file.bytes(), probe(file.bytes(), "ts"));
  const std::int64_t start = ffprobe_start_us(ts);
  for (std::uint64_t t : {std::uint64_t{30'000'000}, index.entries.back().time_us}) {
    const proto::Keyframe* k = index.at_or_before(t);
    ASSERT_NE(k, nullptr);
    const std::string tail = ::testing::TempDir() + "/from-keyframe.ts";
    {
      std::ofstream out(tail, std::ios::binary);
      out.write(reinterpret_cast<const char*>(file.bytes().data() + k->offset),
                static_cast<std::streamsize>(file.bytes().size() - k->offset));
    }
    const std::string first = test::run(
        "ffprobe -v error -select_streams v:0 -show_entries frame=pts_time,key_frame -read_intervals '%+#1' -of csv=p=0 '" + tail + "'");
    ASSERT_FALSE(first.empty());
    const std::int64_t pts = test::micros(first.substr(first.find(',') + 1));
    EXPECT_EQ(first.substr(0, 1), "1") << first;  // key_frame=1
    EXPECT_NEAR(static_cast<double>(pts - start), static_cast<double>(k->time_us), 1.0) << first;
  }
}

TEST(Probe, GarbageIsServedAsRawBytesWithANote) {
  MappedFile file(media_path("garbage.bin"));
  const MediaInfo info = probe(file.bytes(), "garbage.bin");
  EXPECT_FALSE(info.is_media);
  EXPECT_EQ(info.mime_type, "application/octet-stream");
  EXPECT_EQ(info.duration_us, 0u);
  EXPECT_NE(info.note.find("garbage.bin: not media"), std::string::npos) << info.note;
  EXPECT_TRUE(index_keyframes(file.bytes(), info).entries.empty());
}

TEST(Probe, EmptyFileIsNotMedia) {
  MappedFile file(media_path("empty.bin"));
  const MediaInfo info = probe(file.bytes(), "empty.bin");
  EXPECT_FALSE(info.is_media);
  EXPECT_NE(info.note.find("the file is empty"), std::string::npos) << info.note;
  const auto index = index_keyframes(file.bytes(), info);
  EXPECT_TRUE(index.entries.empty());
  EXPECT_TRUE(proto::decode_index(proto::encode_index(index)).ok());
}

TEST(Probe, TruncatedMpegTsIndexesWhatIsThere) {
  MappedFile whole(media_path("test-480p-60s.ts"));
  MappedFile cut(media_path("truncated.ts"));
  const auto full = index_keyframes(whole.bytes(), probe(whole.bytes(), "whole"));
  const MediaInfo info = probe(cut.bytes(), "truncated.ts");
  ASSERT_TRUE(info.is_media) << info.note;
  const auto partial = index_keyframes(cut.bytes(), info);
  ASSERT_FALSE(partial.entries.empty());
  EXPECT_LT(partial.entries.size(), full.entries.size());
  for (std::size_t i = 0; i < partial.entries.size(); ++i) {
    EXPECT_EQ(partial.entries[i].offset, full.entries[i].offset);
    EXPECT_LT(partial.entries[i].offset, cut.bytes().size());
  }
}

TEST(Probe, Mp4WithoutItsMoovIsNotMedia) {
  MappedFile file(media_path("truncated-no-moov.mp4"));
  const MediaInfo info = probe(file.bytes(), "truncated-no-moov.mp4");
  EXPECT_FALSE(info.is_media);
  EXPECT_NE(info.note.find("truncated-no-moov.mp4"), std::string::npos);
  EXPECT_TRUE(index_keyframes(file.bytes(), info).entries.empty());
}

TEST(Remux, Mp4BecomesMpegTsWithDirectEntryKeyframes) {
  MappedFile mp4(media_path("test-480p-60s.mp4"));
  const auto ts = remux_to_mpegts(mp4.bytes(), "test-480p-60s.mp4");
  const MediaInfo info = probe(ts, "remuxed");
  EXPECT_EQ(info.container, "mpegts");
  EXPECT_EQ(info.video_codec, "h264");
  EXPECT_EQ(info.audio_codec, "aac");
  EXPECT_NEAR(static_cast<double>(info.duration_us), 60e6, 0.1e6);
  const auto index = index_keyframes(ts, info);
  EXPECT_EQ(index.flags, proto::kIndexDirectEntry);
  EXPECT_EQ(index.entries.size(), ffprobe_keyframes(media_path("test-480p-60s.mp4")).size());
  // The remuxed bytes decode from a keyframe in the middle, with nothing before it.
  const proto::Keyframe* k = index.at_or_before(30'000'000);
  const std::string tail = ::testing::TempDir() + "/remuxed-tail.ts";
  std::ofstream(tail, std::ios::binary)
      .write(reinterpret_cast<const char*>(ts.data() + k->offset), static_cast<std::streamsize>(ts.size() - k->offset));
  const std::string frames = test::run("ffmpeg -v error -i '" + tail + "' -map 0:v -f framecrc - | grep -vc '^#'");
  EXPECT_GE(std::stoi(frames), 700);  // 30 s at 25 fps, less a GOP
}

TEST(Remux, GarbageIsAClearError) {
  MappedFile file(media_path("garbage.bin"));
  try {
    remux_to_mpegts(file.bytes(), "garbage.bin");
    FAIL() << "remuxing garbage succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("remuxing garbage.bin to MPEG-TS"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vod::media

namespace vod::media {
namespace {

// The live sources' packet scanner on ffmpeg's MPEG-TS: every keyframe ffprobe reports starts at a
// packet the scanner marks as a random access point, with the same PTS, and no other packet is.
TEST(TsScannerOnRealMedia, FindsExactlyFfprobesKeyframes) {
  const std::string file = media_path("test-480p-60s.ts");
  MappedFile ts(file);
  const auto bytes = ts.bytes();
  ASSERT_EQ(bytes.size() % kTsPacketSize, 0u);
  TsScanner scanner;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> found;  // (offset, pts in microseconds)
  std::size_t pcrs = 0, starts = 0;
  for (std::size_t at = 0; at < bytes.size(); at += kTsPacketSize) {
    auto packet = parse_ts_packet(bytes.subspan(at, kTsPacketSize));
    ASSERT_TRUE(packet) << "packet at " << at;
    const auto m = scanner.scan(*packet);
    pcrs += m.pcr_27m.has_value();
    starts += m.access_unit_start;
    if (m.random_access) {
      ASSERT_TRUE(m.pts_90k) << "keyframe at " << at << " without a PTS";
      found.emplace_back(at, *m.pts_90k * 100 / 9);
    }
  }
  EXPECT_EQ(scanner.video_codec(), VideoCodec::h264);
  const auto reference = ffprobe_keyframes(file);
  ASSERT_EQ(found.size(), reference.size());
  for (std::size_t i = 0; i < reference.size(); ++i) {
    EXPECT_EQ(found[i].first, reference[i].pos) << "keyframe " << i;
    EXPECT_NEAR(static_cast<double>(found[i].second), static_cast<double>(reference[i].pts_us), 12.0) << "keyframe " << i;
  }
  EXPECT_EQ(starts, 1500u);  // 60 s at 25 fps: one video PES per frame
  EXPECT_GT(pcrs, 600u);     // ffmpeg writes a PCR at least every 100 ms
}

}  // namespace
}  // namespace vod::media
