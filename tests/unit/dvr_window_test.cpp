// SPDX-License-Identifier: LGPL-2.1-or-later
// The DVR window (--live-dvr): its bounds in bytes and time (window_oldest, a table), what the
// writer puts in the file and publishes in the window index (decoded as a client would), which lap
// of a chunk may be filled (complete_lap), and the index decoder's refusals.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <numeric>

#include "live/dvr_window.hpp"
#include "live/window_bounds.hpp"
#include "vod/protocol/live_messages.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::server::live {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(WindowBounds, Table) {
  const WindowLimits limits{1000, 4, 60'000'000};  // 4 chunks of 1000 bytes, 60 s
  std::deque<WindowPoint> marks{{0, 1'000'000, true}, {900, 2'000'000, true}, {2500, 30'000'000, true}, {4200, 70'000'000, true}};
  struct Row {
    const char* what;
    std::uint64_t claim, newest_time;
    std::uint64_t floor, oldest;
  };
  const Row rows[] = {
      {"nothing written", 0, 0, 0, 0},
      {"within 4 chunks: the first keyframe", 3999, 40'000'000, 0, 0},
      {"the 5th chunk claimed: segment 0 is gone", 4001, 40'000'000, 1000, 2500},
      {"time: 60 s before 62 s cuts the mark at 1 s", 3999, 62'000'000, 0, 900},
      {"time and bytes", 4300, 71'000'000, 1000, 2500},
      {"time: nothing within 60 s but the newest", 5000, 100'000'000, 1000, 4200},
      {"no keyframe within the bounds: empty at the claim", 9000, 200'000'000, 5000, 9000},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(byte_floor(limits, r.claim), r.floor) << r.what;
    EXPECT_EQ(window_oldest(limits, r.claim, r.newest_time, marks), r.oldest) << r.what;
  }
}

struct Temp {
  fs::path dir = fs::temp_directory_path() / ("vod-dvr-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  ~Temp() { fs::remove_all(dir); }
};

// A window and the memory of its index.
struct Window {
  std::vector<std::uint8_t> memory;
  DvrWindow w;
  Window(const std::string& channel, const DvrOptions& o) : memory(DvrWindow::index_length(o.duration)), w(channel, o, memory.data()) {}
};

proto::WindowIndex index_of(const Window& win) {
  auto d = proto::decode_window(win.memory);
  EXPECT_TRUE(d.ok()) << d.error().message;
  return d.ok() ? d.value() : proto::WindowIndex{};
}

std::vector<std::uint8_t> file_bytes(const DvrWindow& w, std::uint64_t at, std::size_t n) {
  std::vector<std::uint8_t> out(n);
  EXPECT_EQ(::pread(w.read_fd(), out.data(), n, static_cast<off_t>(at)), static_cast<ssize_t>(n));
  return out;
}

TEST(DvrWindow, WritesTheStreamRoundTheFileAndPublishesItsRangeAndKeyframes) {
  Temp t;
  // 4 chunks of 4096 bytes (3 for the bytes asked, 1 for the one being written); records of 1000
  // bytes, one a second, a keyframe every third.
  Window win("cam", {t.dir, 10s, 12288, 4096});
  DvrWindow& w = win.w;
  EXPECT_EQ(w.segments(), 4u);
  EXPECT_EQ(fs::file_size(w.path()), 16384u) << "reserved at start";
  std::vector<std::uint8_t> stream;
  for (std::uint32_t i = 0; i < 30; ++i) {
    std::vector<std::uint8_t> rec(1000);
    std::iota(rec.begin(), rec.end(), static_cast<std::uint8_t>(i * 7));
    const std::uint32_t flags = (i % 3 == 0 ? proto::kLiveKeyframe : 0) | (i == 0 ? proto::kLiveDiscontinuity : 0);
    w.append(rec, {i * 1000ull, flags, 1, i * 40'000ull, 1'000'000ull * (i + 1)});
    stream.insert(stream.end(), rec.begin(), rec.end());
    const auto index = index_of(win);
    const auto& h = index.header;
    EXPECT_EQ(h.end_offset, (i + 1) * 1000ull);
    EXPECT_EQ(h.end_time_us, 1'000'000ull * (i + 1));
    // Bytes: 4 chunks, the claimed one included; time: 10 s before the newest record.
    const std::uint64_t floor = byte_floor({4096, 4, 10'000'000}, h.end_offset);
    EXPECT_GE(h.oldest_offset, floor) << i;
    EXPECT_EQ(h.oldest_offset % 3000, 0u) << "at a keyframe, " << i;
    EXPECT_GE(h.oldest_time_us + 10'000'000, h.end_time_us) << i;
    ASSERT_FALSE(index.marks.empty());
    EXPECT_EQ(index.marks.front().offset, h.oldest_offset);
    for (const auto& m : index.marks) EXPECT_TRUE(m.flags & proto::kWindowMarkKeyframe);
  }
  // Every byte of the window is in the file where the stream offset says.
  const auto h = index_of(win).header;
  for (std::uint64_t s = h.oldest_offset; s < h.end_offset; s += 500) EXPECT_EQ(file_bytes(w, s % w.bytes(), 1)[0], stream[s]) << s;
  // The newest segment touched: 29999 / 4096 = 7 (chunk 3, lap 1, being written); chunk 2 holds
  // segment 6 complete (lap 1); chunk 0 holds segment 4 (lap 1).
  EXPECT_EQ(w.complete_lap(3), std::nullopt);
  EXPECT_EQ(w.complete_lap(2), 1u);
  EXPECT_EQ(w.complete_lap(0), 1u);
  EXPECT_EQ(w.complete_lap(4), std::nullopt) << "no such chunk";
}

TEST(DvrWindow, ChunksNeverWrittenHaveNoLap) {
  Temp t;
  Window win("cam", {t.dir, 10s, 16384, 4096});
  DvrWindow& w = win.w;
  EXPECT_EQ(w.complete_lap(0), std::nullopt);
  std::vector<std::uint8_t> rec(5000, 1);
  w.append(rec, {0, proto::kLiveKeyframe, 1, 0, 1'000'000});
  EXPECT_EQ(w.complete_lap(0), 0u);
  EXPECT_EQ(w.complete_lap(1), std::nullopt) << "being written";
  EXPECT_EQ(w.complete_lap(2), std::nullopt) << "never written";
}

TEST(DvrWindow, ADiskTooSmallIsRefusedAtStartNamingTheFile) {
  Temp t;
  // More than any test machine's disk: posix_fallocate fails (EFBIG or ENOSPC).
  try {
    Window w("cam", {t.dir, 10s, 1ull << 60, 1u << 20});
    FAIL() << "reserved an exabyte";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cam's window in " + t.dir.string()), std::string::npos) << e.what();
  }
}

TEST(WindowIndex, DecoderRefusesWhatDoesNotFit) {
  proto::WindowIndex ok;
  ok.header = {7, 0, 0, 100, 5, 2, 4096, 4, 8, 60000, 1, 0};
  ok.marks = {{1, 0, 1, 0, 1, proto::kWindowMarkKeyframe}, {2, 50, 3, 0, 1, proto::kWindowMarkKeyframe}};
  auto bytes = proto::encode(ok);
  auto d = proto::decode_window(bytes);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_EQ(d.value().marks.size(), 2u);
  EXPECT_EQ(proto::keyframe_at_or_before(d.value(), 2)->offset, 0u);
  EXPECT_EQ(proto::keyframe_at_or_before(d.value(), 0)->offset, 0u) << "before the window: its oldest";
  EXPECT_EQ(proto::keyframe_at_or_before(d.value(), 9)->offset, 50u);
  const auto refused = [](proto::WindowIndex w, std::size_t cut = 0) {
    auto b = proto::encode(w);
    b.resize(b.size() - cut);
    return !proto::decode_window(b).ok();
  };
  EXPECT_TRUE(refused(ok, 1)) << "truncated";
  auto bad = ok;
  bad.header.oldest_offset = 200;
  EXPECT_TRUE(refused(bad)) << "oldest after end";
  bad = ok;
  bad.header.end_offset = 4096 * 4 + 1;
  EXPECT_TRUE(refused(bad)) << "more than the window's bytes";
  bad = ok;
  bad.header.segment_size = 5000;
  EXPECT_TRUE(refused(bad)) << "not a power of two";
  bad = ok;
  bad.header.keyframe_capacity = 0;
  EXPECT_TRUE(refused(bad));
  bad = ok;
  bad.header.flags = 2;
  EXPECT_TRUE(refused(bad)) << "undefined flags";
  bad = ok;
  bad.marks[1].offset = 0;
  bad.marks[1].number = 2;
  EXPECT_TRUE(refused(bad)) << "marks out of order";
  // A torn header, and a mark being rewritten (its numbers differ): the first refused, the second skipped.
  auto torn = proto::encode(ok);
  torn[offsetof(proto::WireWindowHeader, seq_begin) + 7] ^= 1;
  EXPECT_FALSE(proto::decode_window(torn).ok());
  auto rewriting = proto::encode(ok);
  rewriting[proto::window_mark_offset(1, 8) + offsetof(proto::WireWindowMark, number_end) + 7] ^= 3;
  auto skipped = proto::decode_window(rewriting);
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ(skipped.value().marks.size(), 1u);
}

}  // namespace
}  // namespace vod::server::live
