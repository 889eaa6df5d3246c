// SPDX-License-Identifier: LGPL-2.1-or-later
// The segment cache without a device: real files read with io_uring into the arena, entries
// published in the table's bytes as a client would Read them, eviction by least recent request
// with generations that only grow, and disk errors answered, not hidden.
#include <gtest/gtest.h>
#include <endian.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "cache/segment_cache.hpp"

namespace vod::server::cache {
namespace {

using namespace std::chrono_literals;

struct TempFile {
  std::filesystem::path path;
  std::vector<std::uint8_t> bytes;
  TempFile(std::size_t size, unsigned seed) : path(std::filesystem::temp_directory_path() / ("vod-cache-" + std::to_string(getpid()) + "-" + std::to_string(seed))) {
    std::mt19937 gen(seed);
    bytes.resize(size);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(gen());
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(size));
  }
  ~TempFile() { std::filesystem::remove(path); }
};

proto::SegmentEntry table_entry(const CachedFile& f, std::uint32_t s) {
  std::uint64_t be;
  std::memcpy(&be, f.table().data() + proto::segment_entry_offset(s), 8);
  return *proto::unpack_segment_entry(be64toh(be));
}

struct Rig {
  loop::Reactor reactor;
  SegmentCache cache;
  explicit Rig(std::uint32_t slots, Clock::duration grace = 0s)
      : cache(reactor, CacheOptions{std::uint64_t{slots} * (64u << 10), 64u << 10, grace, 100ms, 8, 4}) {}
  // Runs the loop until `done` or a few seconds pass.
  void run_until(const std::function<bool()>& done) {
    const auto end = Clock::now() + 5s;
    while (!done() && Clock::now() < end) reactor.run_once(50ms);
  }
};

TEST(SegmentCache, FaultsASegmentInAndPublishesItsEntry) {
  TempFile t(200'000, 1);  // 4 segments of 64 KiB, the last 3392 bytes
  Rig rig(8);
  auto file = std::make_shared<CachedFile>(1, t.path.string(), t.bytes.size(), rig.cache.layout());
  ASSERT_EQ(file->segments(), 4u);
  EXPECT_FALSE(table_entry(*file, 3).resident());
  std::optional<proto::SegmentEntry> got;
  rig.cache.request(file, 3, 0, [&](proto::SegmentStatus s, const proto::SegmentEntry& e) {
    EXPECT_EQ(s, proto::SegmentStatus::ok);
    got = e;
  });
  rig.run_until([&] { return got.has_value(); });
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->resident());
  EXPECT_EQ(table_entry(*file, 3), *got) << "the table a client reads says what the answer said";
  const std::uint8_t* slot = rig.cache.arena().data() + std::uint64_t{got->slot} * (64u << 10);
  EXPECT_EQ(0, std::memcmp(slot, t.bytes.data() + 3 * (64u << 10), 200'000 - 3 * (64u << 10)));
  EXPECT_EQ(rig.cache.stats().misses, 1u);
  EXPECT_EQ(rig.cache.stats().disk_bytes, 200'000u - 3 * (64u << 10));
  // Asked again: a hit, answered at once, the same word.
  bool again = false;
  rig.cache.request(file, 3, 0, [&](proto::SegmentStatus, const proto::SegmentEntry& e) {
    EXPECT_EQ(e, *got);
    again = true;
  });
  EXPECT_TRUE(again);
  EXPECT_EQ(rig.cache.stats().hits, 1u);
  bool range = false;
  rig.cache.request(file, 4, 0, [&](proto::SegmentStatus s, const proto::SegmentEntry&) { range = s == proto::SegmentStatus::out_of_range; });
  EXPECT_TRUE(range);
}

TEST(SegmentCache, ReadAheadFillsTheNextSegmentsAndAFullCacheEvictsWithNewGenerations) {
  TempFile t(16 * (64u << 10), 2);
  Rig rig(4);
  auto file = std::make_shared<CachedFile>(1, t.path.string(), t.bytes.size(), rig.cache.layout());
  int answered = 0;
  auto count = [&](proto::SegmentStatus s, const proto::SegmentEntry&) { answered += s == proto::SegmentStatus::ok; };
  rig.cache.request(file, 0, 2, count);
  // io_uring completes the three reads in any order: wait for all of them, not for the last asked.
  rig.run_until([&] { return answered == 1 && table_entry(*file, 1).resident() && table_entry(*file, 2).resident(); });
  EXPECT_TRUE(table_entry(*file, 1).resident());
  EXPECT_TRUE(table_entry(*file, 2).resident());
  EXPECT_EQ(rig.cache.stats().readahead_fills, 2u);
  const std::uint32_t gen0 = table_entry(*file, 0).generation;
  // Every segment in turn through 4 slots: each must come back byte-exact, and the early ones go.
  for (std::uint32_t s = 3; s < 16; ++s) {
    std::optional<proto::SegmentEntry> e;
    rig.cache.request(file, s, 0, [&](proto::SegmentStatus st, const proto::SegmentEntry& x) {
      ASSERT_EQ(st, proto::SegmentStatus::ok);
      e = x;
    });
    rig.run_until([&] { return e.has_value(); });
    ASSERT_TRUE(e.has_value()) << "segment " << s;
    ASSERT_EQ(0, std::memcmp(rig.cache.arena().data() + std::uint64_t{e->slot} * (64u << 10), t.bytes.data() + s * (64u << 10), 64u << 10));
  }
  EXPECT_GT(rig.cache.stats().evictions, 0u);
  EXPECT_FALSE(table_entry(*file, 0).resident());
  EXPECT_GT(table_entry(*file, 0).generation, gen0) << "an evicted entry's generation moved on";
  EXPECT_LE(rig.cache.slots_in_use(), 4u);
}

TEST(SegmentCache, TheRefillHookRunsBeforeASlotGetsNewBytesAndAfterItsOldEntryWentAbsent) {
  TempFile t(8 * (64u << 10), 4);
  Rig rig(2);
  auto file = std::make_shared<CachedFile>(1, t.path.string(), t.bytes.size(), rig.cache.layout());
  std::vector<std::uint32_t> refilled;
  rig.cache.on_refill([&](std::uint32_t slot) {
    for (std::uint32_t s = 0; s < file->segments(); ++s) {
      const auto e = table_entry(*file, s);
      EXPECT_FALSE(e.resident() && e.slot == slot) << "segment " << s << " is still published in slot " << slot << " as it is refilled";
    }
    refilled.push_back(slot);
  });
  for (std::uint32_t s = 0; s < 6; ++s) {
    bool done = false;
    rig.cache.request(file, s, 0, [&](proto::SegmentStatus st, const proto::SegmentEntry&) { done = st == proto::SegmentStatus::ok; });
    rig.run_until([&] { return done; });
    ASSERT_TRUE(done) << "segment " << s;
  }
  EXPECT_EQ(refilled.size(), 6u) << "once per fill, first fills included";
}

TEST(SegmentCache, AFileThatShrankIsADiskErrorNotGarbage) {
  TempFile t(4 * (64u << 10), 3);
  Rig rig(4);
  auto file = std::make_shared<CachedFile>(1, t.path.string(), t.bytes.size(), rig.cache.layout());
  std::filesystem::resize_file(t.path, 64u << 10);
  std::optional<proto::SegmentStatus> status;
  rig.cache.request(file, 2, 0, [&](proto::SegmentStatus s, const proto::SegmentEntry&) { status = s; });
  rig.run_until([&] { return status.has_value(); });
  EXPECT_EQ(status, proto::SegmentStatus::disk_error);
  EXPECT_FALSE(table_entry(*file, 2).resident());
  EXPECT_EQ(rig.cache.slots_in_use(), 0u);
}

}  // namespace
}  // namespace vod::server::cache
