// SPDX-License-Identifier: LGPL-2.1-or-later
// LiveHlsPackager without sockets: hand-made chunks (whole TS packets, with the frames that begin
// in them) cut into segments at keyframes and parts within PART-TARGET; the window, the
// discontinuities, blocking-reload positions, B-frame and wrapping timestamps, a stream without
// keyframes; and the chunker's output fed through, byte-exact.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "live_chunker.hpp"
#include "live_hls_packager.hpp"
#include "ts_packets.hpp"

namespace vod::proxy {
namespace {

constexpr std::size_t P = media::kTsPacketSize;
constexpr std::uint64_t kFrame = 3600;  // 25 fps in 90 kHz
const auto kNow = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));

// A channel's chunks, one frame of `packets` packets each; every `gop` frames a keyframe.
class Channel {
 public:
  explicit Channel(unsigned gop, std::uint64_t first_pts = 900000) : gop_(gop), pts_(first_pts) {}
  FanoutChunk frame(std::size_t packets = 2, bool stream_start = false) {
    FanoutChunk c;
    c.offset = offset_;
    const bool key = gop_ && frames_ % gop_ == 0;
    for (std::size_t i = 0; i < packets * P; ++i)
      c.bytes.push_back(i % P == 0 ? media::kTsSyncByte : static_cast<std::uint8_t>(offset_ / P + i / P));
    c.join_point = key || stream_start;
    c.stream_start = stream_start;
    c.units.push_back({0, pts_, key});
    offset_ += c.bytes.size();
    pts_ += kFrame;
    ++frames_;
    return c;
  }
  void restart(std::uint64_t pts) {
    pts_ = pts;
    frames_ = 0;
  }
  std::uint64_t& pts() { return pts_; }

 private:
  unsigned gop_;
  std::uint64_t pts_;
  std::uint64_t offset_ = 0, frames_ = 0;
};

std::string bytes_of(const FanoutChunk& c) { return std::string(c.bytes.begin(), c.bytes.end()); }

struct Parsed {
  std::vector<double> extinf;
  std::vector<std::string> segments, parts;
  std::vector<double> part_durations;
  int discontinuities = 0;
  std::string hint;
};

Parsed parse(const std::string& playlist) {
  Parsed p;
  std::size_t at = 0;
  while (at < playlist.size()) {
    const auto nl = playlist.find('\n', at);
    const std::string l = playlist.substr(at, nl - at);
    at = nl + 1;
    if (l.rfind("#EXTINF:", 0) == 0) p.extinf.push_back(std::stod(l.substr(8)));
    else if (l.rfind("#EXT-X-PART:", 0) == 0) {
      p.part_durations.push_back(std::stod(l.substr(l.find("DURATION=") + 9)));
      const auto u = l.find("URI=\"") + 5;
      p.parts.push_back(l.substr(u, l.find('"', u) - u));
    } else if (l == "#EXT-X-DISCONTINUITY") ++p.discontinuities;
    else if (l.rfind("#EXT-X-PRELOAD-HINT:", 0) == 0) {
      const auto u = l.find("URI=\"") + 5;
      p.hint = l.substr(u, l.find('"', u) - u);
    } else if (!l.empty() && l[0] != '#') p.segments.push_back(l);
  }
  return p;
}

TEST(LiveHlsPackager, SegmentsBeginAtKeyframesAndPartsStayWithinTheTarget) {
  LiveHlsPackager h(LiveHlsSettings{2.0, 0.5, 6}, 1000);
  Channel ch(25);  // a keyframe every second
  std::string fed;
  EXPECT_TRUE(h.playlist().empty()) << "nothing before the first part";
  for (int i = 0; i < 25 * 7; ++i) {
    const FanoutChunk c = ch.frame();
    fed += bytes_of(c);
    h.feed(c, kNow);
    if (i == 25 * 5) {
      EXPECT_FALSE(h.holds_back()) << "two complete segments: 4 s, under three target durations";
    }
  }
  EXPECT_TRUE(h.holds_back()) << "three complete segments: 6 s, what a player without LL-HLS starts behind";
  ASSERT_TRUE(h.ready());
  // 7 s at 2 s segments: 3 complete, the 4th being made; numbered from 1000.
  EXPECT_EQ(h.first_msn(), 1000u);
  EXPECT_EQ(h.last_msn(), 1003u);
  std::string joined;
  for (std::uint64_t m = 1000; m < 1003; ++m) {
    auto s = h.segment(m);
    ASSERT_TRUE(s) << m;
    EXPECT_EQ(s->size(), 50 * 2 * P) << "2 s of 25 fps frames";
    // The segment is its parts, in order.
    std::string parts;
    for (std::size_t k = 0; auto part = h.part(m, k); ++k) parts += std::string(*part);
    EXPECT_EQ(parts, std::string(*s));
    joined += std::string(*s);
  }
  EXPECT_FALSE(h.segment(1003)) << "the segment being made is not served whole";
  EXPECT_EQ(joined, fed.substr(0, joined.size())) << "the segments are the channel's bytes, byte-exact";
  const Parsed p = parse(h.playlist());
  EXPECT_EQ(p.segments, (std::vector<std::string>{"seg-1000.ts", "seg-1001.ts", "seg-1002.ts"}));
  for (double d : p.extinf) EXPECT_NEAR(d, 2.0, 1e-9);
  for (double d : p.part_durations) EXPECT_LE(d, 0.5 + 1e-9);
  EXPECT_NE(h.playlist().find("#EXT-X-TARGETDURATION:2\n"), std::string::npos);
  EXPECT_NE(h.playlist().find("#EXT-X-MEDIA-SEQUENCE:1000\n"), std::string::npos);
  EXPECT_NE(h.playlist().find("PART-HOLD-BACK=1.500"), std::string::npos);
  EXPECT_NE(h.playlist().find("#EXT-X-PART:DURATION=0.480,URI=\"part-1001.0.ts\",INDEPENDENT=YES\n"), std::string::npos) << h.playlist();
  // The hint names the part being made; blocking positions follow it.
  const LiveHlsPosition next = h.next_part();
  EXPECT_EQ(next.msn, 1003u);
  EXPECT_EQ(p.hint, "part-1003." + std::to_string(*next.part) + ".ts");
  EXPECT_TRUE(h.has({1002, std::nullopt}));
  EXPECT_TRUE(h.has({1003, *next.part - 1}));
  EXPECT_FALSE(h.has({1003, *next.part}));
  EXPECT_FALSE(h.has({1003, std::nullopt}));
  EXPECT_FALSE(h.has({1004, 0}));
  EXPECT_FALSE(h.part(1003, *next.part));
}

TEST(LiveHlsPackager, StartsAtTheFirstJoinPoint) {
  LiveHlsPackager h(LiveHlsSettings{2.0, 0.5, 6});
  Channel ch(25);
  FanoutChunk first = ch.frame();                         // a keyframe, but the packager joins late:
  for (int i = 0; i < 10; ++i) h.feed(ch.frame(), kNow);  // deltas: nothing to start at
  EXPECT_EQ(h.bytes(), 0u);
  ch.restart(ch.pts());
  const FanoutChunk key = ch.frame();
  h.feed(key, kNow);
  EXPECT_EQ(h.bytes(), key.bytes.size());
  (void)first;
}

TEST(LiveHlsPackager, TheWindowSlidesAndCountsTheDiscontinuitiesItDrops) {
  LiveHlsPackager h(LiveHlsSettings{1.0, 0.5, 3}, 0);
  Channel ch(25);
  for (int i = 0; i < 25 * 3; ++i) h.feed(ch.frame(), kNow);
  // The source restarts: a new stream, with new timestamps.
  ch.restart(5);
  h.feed(ch.frame(2, true), kNow);
  for (int i = 0; i < 25 * 2; ++i) h.feed(ch.frame(), kNow);
  Parsed p = parse(h.playlist());
  EXPECT_EQ(p.discontinuities, 1) << h.playlist();
  EXPECT_NE(h.playlist().find("#EXT-X-DISCONTINUITY-SEQUENCE:0\n"), std::string::npos);
  for (double d : p.extinf) EXPECT_NEAR(d, 1.0, 1e-9) << "a jump of the timestamps is not time";
  // Three more seconds: the discontinuity leaves the window, and its sequence counts it.
  for (int i = 0; i < 25 * 3; ++i) h.feed(ch.frame(), kNow);
  p = parse(h.playlist());
  EXPECT_EQ(p.discontinuities, 0);
  EXPECT_NE(h.playlist().find("#EXT-X-DISCONTINUITY-SEQUENCE:1\n"), std::string::npos) << h.playlist();
  EXPECT_EQ(p.segments.size(), 3u) << "the window";
  EXPECT_FALSE(h.segment(0)) << "left the window";
  EXPECT_LE(h.bytes(), 4 * 25 * 2 * P);
}

TEST(LiveHlsPackager, AStreamStartWithoutTimedFramesLastsNothingNotTheChannelsTime) {
  LiveHlsPackager h(LiveHlsSettings{2.0, 0.5, 6});
  Channel ch(25);
  for (int i = 0; i < 25 * 30; ++i) h.feed(ch.frame(), kNow);  // 30 s of channel time on the clock
  // Two restarts in a row, the first with no frame that has a PTS.
  FanoutChunk untimed = ch.frame(2, true);
  untimed.units.clear();
  h.feed(untimed, kNow);
  ch.restart(90000);
  h.feed(ch.frame(2, true), kNow);
  for (int i = 0; i < 25 * 5; ++i) h.feed(ch.frame(), kNow);
  const Parsed p = parse(h.playlist());
  for (double d : p.extinf) EXPECT_LE(d, 2.5) << h.playlist();
  EXPECT_EQ(h.target_duration(), 2u) << "a restart does not stretch the target duration";
}

TEST(LiveHlsPackager, LongerGopsMakeLongerSegmentsAndTheTargetFollows) {
  LiveHlsPackager h(LiveHlsSettings{2.0, 0.5, 6});
  Channel ch(75);  // a keyframe every 3 s
  for (int i = 0; i < 75 * 3; ++i) h.feed(ch.frame(), kNow);
  const Parsed p = parse(h.playlist());
  ASSERT_EQ(p.extinf.size(), 2u);
  EXPECT_NEAR(p.extinf[0], 3.0, 1e-9);
  EXPECT_EQ(h.target_duration(), 3u);
  EXPECT_NE(h.playlist().find("#EXT-X-TARGETDURATION:3\n"), std::string::npos);
}

TEST(LiveHlsPackager, AStreamWithoutKeyframesIsStillCut) {
  LiveHlsPackager h(LiveHlsSettings{1.0, 0.5, 6});
  Channel ch(0);  // no keyframe at all: joined at the stream's start
  h.feed(ch.frame(2, true), kNow);
  for (int i = 0; i < 25 * 7; ++i) h.feed(ch.frame(), kNow);
  const Parsed p = parse(h.playlist());
  ASSERT_GE(p.extinf.size(), 2u);
  for (double d : p.extinf) EXPECT_LE(d, kMaxSegmentFactor * 1.0 + 0.04 + 1e-9);
}

TEST(LiveHlsPackager, BFramesAndAWrappingClockKeepDurationsRight) {
  LiveHlsPackager h(LiveHlsSettings{1.0, 0.5, 6});
  // 90 kHz timestamps close to 2^33, in B-frame order (I P B B ...), wrapping mid-stream.
  Channel ch(25, (std::uint64_t{1} << 33) - 50 * kFrame);
  // Decode order I0 P3 B1 B2 P6 B4 B5 ...: a P-frame is shown after the two B-frames that follow it.
  for (int i = 0; i < 25 * 4; ++i) {
    FanoutChunk c = ch.frame();
    const int k = (i - 1) % 3;
    if (i > 0) *c.units[0].pts_90k += k == 0 ? 2 * kFrame : std::uint64_t(0) - kFrame;
    *c.units[0].pts_90k %= std::uint64_t{1} << 33;
    h.feed(c, kNow);
  }
  const Parsed p = parse(h.playlist());
  ASSERT_GE(p.extinf.size(), 3u);
  double total = 0;
  for (double d : p.extinf) {
    EXPECT_GT(d, 0.8);
    EXPECT_LT(d, 1.2);
    total += d;
  }
  EXPECT_NEAR(total, static_cast<double>(p.extinf.size()), 0.2);
}

TEST(LiveHlsPackager, ChunksFromTheChunkerPackageByteExact) {
  // The real path: TS packets through LiveChunker (which finds the frames), then the packager.
  using test::packet;
  using test::pes;
  LiveChunker chunker;
  LiveHlsPackager h(LiveHlsSettings{1.0, 0.5, 10});
  std::vector<std::uint8_t> input;
  std::uint64_t pts = 90000;
  for (int f = 0; f < 25 * 4; ++f) {
    if (f % 25 == 0) {
      for (auto p : {test::pat(), test::pmt(0x1b)}) input.insert(input.end(), p.begin(), p.end());
    }
    const bool key = f % 25 == 0;
    auto first = packet(0x100, true, pes(pts, {0, 0, 0, 1, static_cast<std::uint8_t>(key ? 0x65 : 0x41), 0x88}), key);
    input.insert(input.end(), first.begin(), first.end());
    auto rest = packet(0x100, false, std::vector<std::uint8_t>(184, 0x5a));
    input.insert(input.end(), rest.begin(), rest.end());
    pts += kFrame;
  }
  std::string packaged_from;
  bool started = false;
  for (std::size_t at = 0; at < input.size(); at += 1000) {
    const std::size_t n = std::min<std::size_t>(1000, input.size() - at);
    for (const auto& c : chunker.feed(std::span<const std::uint8_t>(input.data() + at, n), false)) {
      started = started || c->join_point;
      if (started) packaged_from += bytes_of(*c);
      h.feed(*c, kNow);
    }
  }
  const Parsed p = parse(h.playlist());
  ASSERT_EQ(p.extinf.size(), 3u) << h.playlist();
  std::string joined;
  for (std::uint64_t m = h.first_msn(); auto s = h.segment(m); ++m) {
    EXPECT_EQ(static_cast<unsigned char>((*s)[0]), media::kTsSyncByte);
    EXPECT_EQ(static_cast<unsigned char>((*s)[5]), 0x00) << "segment " << m << " begins with the PAT (table id 0)";
    joined += std::string(*s);
  }
  EXPECT_EQ(joined, packaged_from.substr(0, joined.size()));
  for (double d : p.extinf) EXPECT_NEAR(d, 1.0, 1e-9);
}

}  // namespace
}  // namespace vod::proxy
