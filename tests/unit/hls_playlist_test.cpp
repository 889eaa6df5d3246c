// SPDX-License-Identifier: LGPL-2.1-or-later
// The HLS deciders of vod-proxy (proxy/src/hls_playlist.hpp): segments cut at keyframes, the TS
// init range, the playlists' text and the RFC 6381 codec strings, as tables.
#include <gtest/gtest.h>

#include "hls_playlist.hpp"
#include "ts_packets.hpp"

namespace vod::proxy::hls {
namespace {

proto::KeyframeIndex index_of(std::vector<std::pair<std::uint64_t, std::uint64_t>> keyframes) {  // (seconds × 10, offset)
  proto::KeyframeIndex i;
  for (auto [t, off] : keyframes) i.entries.push_back({t * 100'000, off});
  return i;
}

struct CutCase {
  const char* what;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> keyframes;
  std::uint64_t size, duration_ds, target_ds;  // tenths of a second
  std::vector<Segment> want;                   // start and duration in tenths below
};

Segment seg(std::uint64_t off, std::uint64_t len, std::uint64_t start_ds, std::uint64_t dur_ds) {
  return Segment{{off, len}, start_ds * 100'000, dur_ds * 100'000};
}

TEST(HlsCut, Table) {
  const std::vector<CutCase> cases = {
      {"GOPs of 2 s into 4 s segments",
       {{0, 564}, {20, 1000}, {40, 2000}, {60, 3000}, {80, 4000}},
       5000,
       100,
       40,
       {seg(564, 1436, 0, 40), seg(2000, 2000, 40, 40), seg(4000, 1000, 80, 20)}},
      {"the rest within the target goes whole to the end",
       {{0, 0}, {20, 1000}, {40, 2000}, {50, 2500}},
       3000,
       70,
       40,
       {seg(0, 2000, 0, 40), seg(2000, 1000, 40, 30)}},
      {"a GOP longer than the target is one segment",
       {{0, 100}, {100, 900}, {120, 1000}},
       1200,
       130,
       40,
       {seg(100, 800, 0, 100), seg(900, 300, 100, 30)}},
      {"keyframes that go back in time or offset are skipped",
       {{0, 100}, {20, 500}, {10, 600}, {30, 400}, {60, 900}},
       1000,
       80,
       40,
       {seg(100, 400, 0, 20), seg(500, 400, 20, 40), seg(900, 100, 60, 20)}},
      {"keyframes at or past the end are dropped",
       {{0, 0}, {50, 600}, {90, 1000}},
       1000,
       100,
       40,
       {seg(0, 600, 0, 50), seg(600, 400, 50, 50)}},
      {"no keyframe, no segment", {}, 1000, 100, 40, {}},
      {"unknown duration: the last at the average rate",
       {{0, 0}, {40, 1000}, {80, 2000}},
       2500,
       0,
       40,
       {seg(0, 1000, 0, 40), seg(1000, 1000, 40, 40), seg(2000, 500, 80, 20)}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(cut_segments(index_of(c.keyframes), c.size, c.duration_ds * 100'000, c.target_ds * 100'000), c.want);
  }
}

TEST(HlsCut, SegmentsTileTheMovieFromTheFirstKeyframe) {
  proto::KeyframeIndex index;
  for (std::uint64_t k = 0; k < 100; ++k) index.entries.push_back({k * 1'001'000 + 33'000, 376 + k * 7919});
  const std::uint64_t size = 376 + 100 * 7919;
  const auto segments = cut_segments(index, size, 100'200'000, 4'000'000);
  ASSERT_FALSE(segments.empty());
  std::uint64_t at = 376;
  for (const auto& s : segments) {
    EXPECT_EQ(s.bytes.offset, at);
    EXPECT_GT(s.bytes.length, 0u);
    at += s.bytes.length;
  }
  EXPECT_EQ(at, size);
  EXPECT_EQ(target_duration(segments), 4u);
}

TEST(HlsTarget, RoundsEachDurationToTheNearestSecond) {
  EXPECT_EQ(target_duration({}), 1u);
  EXPECT_EQ(target_duration({seg(0, 1, 0, 44)}), 4u);
  EXPECT_EQ(target_duration({seg(0, 1, 0, 45), seg(1, 1, 45, 20)}), 5u);
  EXPECT_EQ(target_duration({seg(0, 1, 0, 101)}), 10u);
}

std::vector<std::uint8_t> bytes_of(std::initializer_list<test::Packet> packets) {
  std::vector<std::uint8_t> out;
  for (const auto& p : packets) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(HlsTsInit, Table) {
  const auto sdt = test::packet(0x11, true, test::section(0x42, {0, 1, 0xff}));
  const auto null = test::packet(0x1fff, false, {});
  const auto video = test::packet(0x100, true, test::pes(900, {0, 0, 1, 0x65}));
  struct Case {
    const char* what;
    std::vector<std::uint8_t> head;
    std::optional<ByteSpan> want;
  };
  const std::vector<Case> cases = {
      {"SDT, PAT, PMT, then video (ffmpeg's order)", bytes_of({sdt, test::pat(), test::pmt(0x1b), video}), ByteSpan{0, 3 * 188}},
      {"PAT, null, PMT", bytes_of({test::pat(), null, test::pmt(0x1b), video}), ByteSpan{0, 3 * 188}},
      {"media before the PMT: no map", bytes_of({test::pat(), video, test::pmt(0x1b)}), std::nullopt},
      {"no PAT: no map", bytes_of({test::pmt(0x1b), video}), std::nullopt},
      {"the PMT after the head's end", bytes_of({test::pat()}), std::nullopt},
      {"lost sync",
       [&] {
         auto b = bytes_of({test::pat(), test::pmt(0x1b)});
         b[188] = 0;
         return b;
       }(),
       std::nullopt},
      {"empty", {}, std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(ts_init_range(c.head), c.want);
  }
}

TEST(HlsTsInit, APatNamingATablePidOrNoProgramGivesNoMap) {
  const auto pat_to = [](std::vector<std::uint8_t> programs) { return test::packet(0, true, test::section(0x00, programs)); };
  EXPECT_EQ(ts_init_range(bytes_of({pat_to({0x00, 0x00, 0xe0, 0x10})})), std::nullopt);  // only the NIT
  EXPECT_EQ(ts_init_range(bytes_of({pat_to({0x00, 0x01, 0xe0, 0x11})})), std::nullopt);  // the PMT on the SDT's PID
  EXPECT_EQ(ts_init_range(bytes_of({pat_to({})})), std::nullopt);
}

TEST(HlsPlaylist, TsMediaPlaylistByRanges) {
  const std::vector<Segment> segments = {seg(564, 1436, 0, 40), seg(2000, 1000, 40, 21)};
  EXPECT_EQ(
      ts_media_playlist(segments, "/movies/a%20b.ts", ByteSpan{0, 564}),
      "#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-INDEPENDENT-SEGMENTS\n"
      "#EXT-X-MAP:URI=\"/movies/a%20b.ts\",BYTERANGE=\"564@0\"\n"
      "#EXTINF:4.000,\n#EXT-X-BYTERANGE:1436@564\n/movies/a%20b.ts\n"
      "#EXTINF:2.100,\n#EXT-X-BYTERANGE:1000@2000\n/movies/a%20b.ts\n#EXT-X-ENDLIST\n");
  const std::string without = ts_media_playlist(segments, "/movies/x.ts", std::nullopt);
  EXPECT_NE(without.find("#EXT-X-VERSION:4\n"), std::string::npos);
  EXPECT_EQ(without.find("EXT-X-MAP"), std::string::npos);
}

TEST(HlsPlaylist, Multivariant) {
  EXPECT_EQ(multivariant_playlist(Variant{"index.m3u8", "avc1.64001e,mp4a.40.2", 1500000, 1000000, 854, 480, 0, 0, "", "", ""}),
            "#EXTM3U\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-STREAM-INF:BANDWIDTH=1500000,AVERAGE-BANDWIDTH=1000000,CODECS=\"avc1.64001e,mp4a."
            "40.2\","
            "RESOLUTION=854x480\nindex.m3u8\n");
  EXPECT_EQ(multivariant_playlist(Variant{"index.m3u8", "", 0, 0, 0, 0, 0, 0, "", "", ""}),
            "#EXTM3U\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-STREAM-INF:BANDWIDTH=1\nindex.m3u8\n");
}

TEST(HlsPlaylist, MultivariantOfATitle) {
  const std::vector<Variant> v = {
      {"A%20-%20720p.mp4/index.m3u8", "avc1.64001f,mp4a.40.2", 3000000, 2500000, 1280, 720, 30000, 1001, "", "", ""},
      {"A%20-%20360p.mp4/index.m3u8", "avc1.64001e", 900000, 800000, 640, 360, 25, 1, "", "", ""}};
  EXPECT_EQ(multivariant_playlist(v),
            "#EXTM3U\n#EXT-X-INDEPENDENT-SEGMENTS\n"
            "#EXT-X-STREAM-INF:BANDWIDTH=3000000,AVERAGE-BANDWIDTH=2500000,CODECS=\"avc1.64001f,mp4a.40.2\",RESOLUTION=1280x720,"
            "FRAME-RATE=29.970\nA%20-%20720p.mp4/index.m3u8\n"
            "#EXT-X-STREAM-INF:BANDWIDTH=900000,AVERAGE-BANDWIDTH=800000,CODECS=\"avc1.64001e\",RESOLUTION=640x360,FRAME-RATE=25.000\n"
            "A%20-%20360p.mp4/index.m3u8\n");
}

TEST(HlsPlaylist, MultivariantWithAudioRenditions) {
  const std::vector<Variant> v = {
      {"video-720p/index.m3u8", "avc1.64001f,mp4a.40.2", 3000000, 2500000, 1280, 720, 25, 1, "audio", "subs", "video-720p/iframes.m3u8"}};
  const std::vector<MediaRendition> a = {{"AUDIO", "audio", "audio-0/index.m3u8", "en", "en (1)", 2, true},
                                         {"AUDIO", "audio", "audio-1/index.m3u8", "", "audio (2)", 0, false},
                                         {"SUBTITLES", "subs", "subtitles-0/index.m3u8", "sv", "sv (1)", 0, false}};
  EXPECT_EQ(multivariant_playlist(v, a),
            "#EXTM3U\n#EXT-X-INDEPENDENT-SEGMENTS\n"
            "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"en (1)\",LANGUAGE=\"en\",DEFAULT=YES,AUTOSELECT=YES,CHANNELS=\"2\","
            "URI=\"audio-0/index.m3u8\"\n"
            "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"audio\",NAME=\"audio (2)\",DEFAULT=NO,AUTOSELECT=YES,URI=\"audio-1/index.m3u8\"\n"
            "#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"subs\",NAME=\"sv (1)\",LANGUAGE=\"sv\",DEFAULT=NO,AUTOSELECT=YES,"
            "URI=\"subtitles-0/index.m3u8\"\n"
            "#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=300000,CODECS=\"avc1.64001f\",RESOLUTION=1280x720,URI=\"video-720p/iframes.m3u8\"\n"
            "#EXT-X-STREAM-INF:BANDWIDTH=3000000,AVERAGE-BANDWIDTH=2500000,CODECS=\"avc1.64001f,mp4a.40.2\",RESOLUTION=1280x720,"
            "FRAME-RATE=25.000,AUDIO=\"audio\",SUBTITLES=\"subs\"\nvideo-720p/index.m3u8\n");
}

TEST(HlsPlaylist, IFramePlaylistHasAnEntryPerKeyframe) {
  EXPECT_EQ(iframe_playlist({0, 2'000'000, 4'500'000}, 6'000'000),
            "#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:3\n#EXT-X-MEDIA-SEQUENCE:0\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-I-FRAMES-ONLY\n"
            "#EXT-X-MAP:URI=\"init.mp4\"\n#EXTINF:2.000,\niframe-0.m4s\n#EXTINF:2.500,\niframe-1.m4s\n#EXTINF:1.500,\niframe-2.m4s\n"
            "#EXT-X-ENDLIST\n");
}

TEST(HlsCut, ARenditionIsCutWhereItsTitleIs) {
  // The title's segments, from its first rendition: keyframes every 2 s, cut at 4 s.
  const auto reference = cut_segments(index_of({{0, 100}, {20, 5000}, {40, 9000}, {60, 14000}, {80, 20000}}), 25000, 9'500'000, 4'000'000);
  ASSERT_EQ(reference.size(), 3u);
  // A rendition whose keyframes are up to 30 ms off (within a frame) and whose bytes differ.
  proto::KeyframeIndex other;
  for (auto [t, off] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{
           {0, 50}, {2'030'000, 900}, {3'980'000, 1500}, {6'010'000, 2000}, {8'020'000, 2600}})
    other.entries.push_back({t, off});
  const auto cut = cut_like(reference, other, 3000, 9'500'000, 40'000);
  ASSERT_EQ(cut.size(), 3u);
  EXPECT_EQ(cut[0], (Segment{{50, 1450}, 0, 3'980'000, 4'000'000}));
  EXPECT_EQ(cut[1], (Segment{{1500, 1100}, 3'980'000, 4'040'000, 4'000'000}));
  EXPECT_EQ(cut[2], (Segment{{2600, 400}, 8'020'000, 1'480'000, 1'500'000}));
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(cut[i].extinf_us(), reference[i].duration_us);  // the same EXTINF in every rendition
  EXPECT_EQ(fmp4_media_playlist(cut), fmp4_media_playlist(reference));
  // A rendition the title's cuts do not fit: a start 100 ms from any keyframe, or no keyframe at all.
  other.entries[2].time_us = 4'100'000;
  EXPECT_TRUE(cut_like(reference, other, 3000, 9'500'000, 40'000).empty());
  EXPECT_TRUE(cut_like(reference, proto::KeyframeIndex{}, 3000, 9'500'000, 40'000).empty());
}

TEST(HlsPlaylist, PeakBandwidthIsTheBusiestSegment) {
  EXPECT_EQ(peak_bandwidth({seg(0, 1000, 0, 10), seg(1000, 3000, 10, 10)}, 7), 24000u);
  EXPECT_EQ(peak_bandwidth({}, 7), 7u);
}

TEST(HlsCodecs, Rfc6381Strings) {
  EXPECT_EQ(avc_codec(100, 0, 30), "avc1.64001e");
  EXPECT_EQ(avc_codec(66, 0xc0, 31), "avc1.42c01f");
  EXPECT_EQ(avc_codec(0, 0, 30), std::nullopt);
  EXPECT_EQ(avc_codec(100, 0, 0), std::nullopt);
  EXPECT_EQ(aac_codec(2), "mp4a.40.2");
  EXPECT_EQ(aac_codec(5), "mp4a.40.5");
  EXPECT_EQ(aac_codec(0), std::nullopt);
}

// A DVR window's sliding playlist: a segment per keyframe mark within the window's whole chunks,
// each with its program date and byte range, numbered by its mark; a new stream is a discontinuity;
// a delta update skips what is older than six target durations.
TEST(HlsPlaylist, DvrWindow) {
  proto::WindowIndex w;
  w.header.segment_size = 1000;
  w.header.segment_count = 8;
  w.header.end_offset = 5500;  // whole chunks end at 5000
  w.header.end_time_us = 1'795'809'611'000'000;
  const std::uint64_t t0 = 1'795'809'600'000'000;  // 2026-11-27T20:00:00Z
  w.marks = {{11, 0, t0, 0, 3, proto::kWindowMarkKeyframe},
             {12, 1200, t0 + 2'000'000, 0, 3, proto::kWindowMarkKeyframe},
             {13, 2500, t0 + 4'500'000, 0, 4, proto::kWindowMarkKeyframe | proto::kWindowMarkDiscontinuity},
             {14, 4000, t0 + 7'000'000, 0, 4, proto::kWindowMarkKeyframe},
             {15, 5200, t0 + 9'000'000, 0, 4, proto::kWindowMarkKeyframe}};  // past the whole chunks: ends nothing yet
  const std::string p = dvr_playlist(w, "dvr.ts", 2, false);
  EXPECT_EQ(p,
            "#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:3\n#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=18.0\n"
            "#EXT-X-MEDIA-SEQUENCE:10\n#EXT-X-DISCONTINUITY-SEQUENCE:2\n#EXT-X-INDEPENDENT-SEGMENTS\n"
            "#EXT-X-PROGRAM-DATE-TIME:2026-11-27T20:00:00.000Z\n#EXTINF:2.000,\n#EXT-X-BYTERANGE:1200@0\ndvr.ts\n"
            "#EXT-X-PROGRAM-DATE-TIME:2026-11-27T20:00:02.000Z\n#EXTINF:2.500,\n#EXT-X-BYTERANGE:1300@1200\ndvr.ts\n"
            "#EXT-X-DISCONTINUITY\n"
            "#EXT-X-PROGRAM-DATE-TIME:2026-11-27T20:00:04.500Z\n#EXTINF:2.500,\n#EXT-X-BYTERANGE:1500@2500\ndvr.ts\n");
  // Sliding: the first mark left the window; the segments keep their numbers.
  w.marks.erase(w.marks.begin());
  EXPECT_NE(dvr_playlist(w, "dvr.ts", 2, false).find("#EXT-X-MEDIA-SEQUENCE:11\n"), std::string::npos);
  // A delta update: 6 x 3 s = 18 s kept at the end, the rest skipped.
  for (std::uint64_t k = 0; k < 20; ++k)
    w.marks.push_back({16 + k, 6000 + 100 * k, t0 + 10'000'000 + 2'000'000 * k, 0, 4, proto::kWindowMarkKeyframe});
  w.header.end_offset = 9000;
  const std::string skip = dvr_playlist(w, "dvr.ts", 2, true);
  EXPECT_NE(skip.find("#EXT-X-VERSION:9\n"), std::string::npos);
  EXPECT_NE(skip.find("#EXT-X-SKIP:SKIPPED-SEGMENTS="), std::string::npos);
  const std::string whole = dvr_playlist(w, "dvr.ts", 2, false);
  EXPECT_LT(std::count(skip.begin(), skip.end(), '@'), std::count(whole.begin(), whole.end(), '@'));
}

}  // namespace
}  // namespace vod::proxy::hls
