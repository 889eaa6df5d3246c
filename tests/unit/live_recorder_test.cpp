// SPDX-License-Identifier: LGPL-2.1-or-later
// --live-record: where files begin and are cut (decide_split, a table), what a Recorder writes
// (byte-exact spans of the source, cut before the tables that lead into a keyframe, named by time,
// hidden until complete, without the access unit a stop cut into), and what Recordings does at
// start (a crashed run's hidden file completed) and for --live-record-keep (the oldest go first).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "live/record_split.hpp"
#include "live/recorder.hpp"
#include "live/recordings.hpp"
#include "loop/reactor.hpp"

namespace vod::server::live {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Action = SplitDecision::Action;

TEST(RecordSplit, Table) {
  struct Row {
    const char* what;
    SplitInput in;
    SplitDecision want;
  };
  const Row rows[] = {
      {"waiting: a packet that is no keyframe waits", {false, 1s, 1h, 0, std::nullopt, false}, {}},
      {"waiting: a keyframe begins the file", {false, 1s, 1h, 0, std::nullopt, true}, {Action::begin, 0}},
      {"waiting: with the tables held before it", {false, 1s, 1h, 376, 0, true}, {Action::begin, 0}},
      {"waiting: no keyframe for 10 s: the next packet begins it", {false, 10s, 1h, 188, 0, false}, {Action::begin, 0}},
      {"recording: young file", {true, 59min, 1h, 4096, std::nullopt, true}, {}},
      {"recording: old enough, no keyframe yet", {true, 1h, 1h, 4096, 3760, false}, {}},
      {"recording: old enough, a keyframe: cut before its tables", {true, 1h, 1h, 4096, 3760, true}, {Action::cut, 3760}},
      {"recording: ... or before it when it has none", {true, 1h, 1h, 4096, std::nullopt, true}, {Action::cut, 4096}},
      {"recording: no keyframe for 10 s after the split: cut anyway", {true, 1h + 10s, 1h, 4096, std::nullopt, false}, {Action::cut, 4096}},
      {"recording: split 0 never cuts", {true, 100h, 0ms, 4096, std::nullopt, true}, {}},
  };
  for (const auto& r : rows) EXPECT_EQ(decide_split(r.in), r.want) << r.what;
}

struct Temp {
  fs::path dir = fs::temp_directory_path() / ("vod-recorder-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  Temp() { fs::create_directories(dir); }
  ~Temp() { fs::remove_all(dir); }
};

std::vector<std::uint8_t> read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<fs::path> files(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// A source: packets numbered in their first payload byte, fed at a time in µs.
struct Source {
  Recorder& r;
  std::vector<std::uint8_t> sent;  // everything fed
  std::uint8_t n = 0;
  void feed(std::uint64_t t_us, bool table, bool unit, bool key) {
    std::vector<std::uint8_t> p(188, 0xff);
    p[0] = 0x47;
    p[4] = n++;
    p[5] = static_cast<std::uint8_t>(table);
    sent.insert(sent.end(), p.begin(), p.end());
    r.packet(p, {table, unit, key}, t_us);
  }
  // One second of a GOP at `t`: tables, a keyframe, then `frames` - 1 frames of 2 packets.
  void gop(std::uint64_t t, int frames = 5) {
    feed(t, true, false, false);
    feed(t, true, false, false);
    feed(t, false, true, true);
    feed(t, false, false, false);
    for (int f = 1; f < frames; ++f) {
      feed(t + f * 200'000u, false, true, false);
      feed(t + f * 200'000u, false, false, false);
    }
  }
};

constexpr std::uint64_t kT0 = 1'795'000'000'000'000;  // 2026-11-18 11.06.40 UTC

TEST(Recorder, FilesAreSpansOfTheSourceCutAtKeyframesAndCompletedAtAStop) {
  Temp t;
  std::vector<FinishedRecording> done;
  std::vector<std::uint8_t> sent;
  std::size_t skipped_bytes = 0;
  {
    Recorder r("news/cam", {t.dir, 2s, 0}, [&](const FinishedRecording& f) { done.push_back(f); });
    Source s{r, {}, 0};
    s.feed(kT0 - 1000, false, true, false);  // joined mid-GOP: not recorded
    s.feed(kT0 - 1000, false, false, false);
    skipped_bytes = s.sent.size();
    for (int g = 0; g < 5; ++g) s.gop(kT0 + g * 1'000'000u);
    s.feed(kT0 + 5'000'000, false, true, false);  // an access unit the stop cuts into: left out
    EXPECT_EQ(r.stats().skipped, skipped_bytes);
    ASSERT_TRUE(r.writing());
    EXPECT_EQ(r.writing()->filename().string()[0], '.');
    sent = s.sent;
  }
  const fs::path folder = t.dir / "Live" / "news" / "cam";
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].path, folder / recording_name("cam", kT0));
  EXPECT_EQ(done[0].path.filename(), "cam 2026-11-18 11.06.40.ts");
  EXPECT_EQ(done[1].path, folder / recording_name("cam", kT0 + 2'000'000));
  EXPECT_EQ(done[2].path, folder / recording_name("cam", kT0 + 4'000'000));
  EXPECT_EQ(files(folder).size(), 3u) << "nothing hidden is left";
  const std::size_t gop = 12 * 188;
  std::size_t at = skipped_bytes;
  for (std::size_t i = 0; i < 3; ++i) {
    const auto bytes = read(done[i].path);
    const std::size_t want = i < 2 ? 2 * gop : gop;  // two GOPs a file; the last ends at the stop
    ASSERT_EQ(bytes.size(), want) << i;
    EXPECT_EQ(done[i].bytes, want);
    EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), sent.begin() + static_cast<std::ptrdiff_t>(at))) << i;
    EXPECT_EQ(bytes[5], 1) << "file " << i << " begins with the tables before its keyframe";
    at += want;
  }
  EXPECT_EQ(at + 188, sent.size()) << "only the access unit the stop cut into is left out";
}

TEST(Recorder, AnEndOfStreamCompletesTheFileWithEverythingTheSourceSent) {
  Temp t;
  std::vector<FinishedRecording> done;
  Recorder r("cam", {t.dir, 0ms, 0}, [&](const FinishedRecording& f) { done.push_back(f); });
  Source s{r, {}, 0};
  s.gop(kT0);
  s.feed(kT0 + 900'000, false, true, false);
  r.end_stream(kT0 + 950'000);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(read(done[0].path), s.sent);
  EXPECT_FALSE(r.writing());
  s.gop(kT0 + 3'000'000);  // the next stream: another file
  r.end_stream(kT0 + 4'000'000);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[1].path.filename(), "cam 2026-11-18 11.06.43.ts");
  EXPECT_EQ(r.stats().files, 2u);
}

TEST(Recordings, ACrashedRunsFileIsCompletedAndTheOldestGoFirst) {
  Temp t;
  const fs::path folder = t.dir / "Live" / "cam";
  fs::create_directories(folder);
  const auto write = [&](const std::string& name, std::size_t bytes, int age_s) {
    std::ofstream(folder / name, std::ios::binary) << std::string(bytes, 'x');
    fs::last_write_time(folder / name, fs::file_time_type::clock::now() - std::chrono::seconds(age_s));
  };
  write("cam 2026-11-19 08.00.00.ts", 188 * 1000, 300);
  write("cam 2026-11-19 08.01.00.ts", 188 * 1000, 200);
  write(".cam 2026-11-19 08.02.00.ts", 188 * 1000 + 100, 100);  // a kill -9 cut it inside a packet
  write("other.ts", 188 * 5000, 400);                           // not a recording: never deleted
  loop::Reactor reactor;
  Recordings recordings(reactor, {t.dir, 1h, 188 * 2100}, {"cam"}, [] {});
  EXPECT_FALSE(fs::exists(folder / ".cam 2026-11-19 08.02.00.ts"));
  ASSERT_TRUE(fs::exists(folder / "cam 2026-11-19 08.02.00.ts"));
  EXPECT_EQ(fs::file_size(folder / "cam 2026-11-19 08.02.00.ts"), 188u * 1000) << "cut to whole packets";
  EXPECT_FALSE(fs::exists(folder / "cam 2026-11-19 08.00.00.ts")) << "the oldest went to keep 3000 packets' worth";
  EXPECT_TRUE(fs::exists(folder / "cam 2026-11-19 08.01.00.ts"));
  EXPECT_TRUE(fs::exists(folder / "other.ts"));
}

}  // namespace
}  // namespace vod::server::live
