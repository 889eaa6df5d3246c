// SPDX-License-Identifier: LGPL-2.1-or-later
// The segment cache without a device: real files read with io_uring into the arena, entries
// published in the table's bytes as a client would Read them, eviction by least recent request
// with generations that only grow, and disk errors answered, not hidden.
#include <endian.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "cache/segment_cache.hpp"
#include "ondemand/segment_channel.hpp"

namespace vod::server::cache {
namespace {

using namespace std::chrono_literals;

// A CachedFile as the library lists it: the path's inode, size and mtime as stat sees them now.
std::shared_ptr<CachedFile> listed(std::uint64_t id, const std::filesystem::path& path, const TableLayout& layout) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) throw std::runtime_error("stat " + path.string());
  return std::make_shared<CachedFile>(id, path.string(), static_cast<std::uint64_t>(st.st_size),
                                      std::int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec, st.st_ino, layout);
}

struct TempFile {
  std::filesystem::path path;
  std::vector<std::uint8_t> bytes;
  TempFile(std::size_t size, unsigned seed)
      : path(std::filesystem::temp_directory_path() / ("vod-cache-" + std::to_string(getpid()) + "-" + std::to_string(seed))) {
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
  auto file = listed(1, t.path, rig.cache.layout());
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
  rig.cache.request(file, 4, 0,
                    [&](proto::SegmentStatus s, const proto::SegmentEntry&) { range = s == proto::SegmentStatus::out_of_range; });
  EXPECT_TRUE(range);
}

TEST(SegmentCache, ReadAheadFillsTheNextSegmentsAndAFullCacheEvictsWithNewGenerations) {
  TempFile t(16 * (64u << 10), 2);
  Rig rig(4);
  auto file = listed(1, t.path, rig.cache.layout());
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
  auto file = listed(1, t.path, rig.cache.layout());
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
  auto file = listed(1, t.path, rig.cache.layout());
  std::filesystem::resize_file(t.path, 64u << 10);
  std::optional<proto::SegmentStatus> status;
  rig.cache.request(file, 2, 0, [&](proto::SegmentStatus s, const proto::SegmentEntry&) { status = s; });
  rig.run_until([&] { return status.has_value(); });
  EXPECT_EQ(status, proto::SegmentStatus::disk_error);
  EXPECT_FALSE(table_entry(*file, 2).resident());
  EXPECT_EQ(rig.cache.slots_in_use(), 0u);
}

TEST(FdCache, HoldsNoMoreThanItsCapacityAndNeverClosesAPinnedDescriptor) {
  std::vector<std::unique_ptr<TempFile>> temps;
  std::vector<std::shared_ptr<CachedFile>> files;
  TableLayout layout;
  layout.segment_size = 64u << 10;
  for (unsigned i = 0; i < 5; ++i) {
    temps.push_back(std::make_unique<TempFile>(70'000, 40 + i));
    files.push_back(listed(i + 1, temps.back()->path, layout));
  }
  FdCache fds(2);
  for (auto& f : files) {
    auto h = fds.open(*f);
    EXPECT_GE(h.fd(), 0);
    EXPECT_LE(fds.open_count(), 2u);
  }
  EXPECT_EQ(fds.open_count(), 2u);
  EXPECT_EQ(fds.opens(), 5u);
  {
    auto again = fds.open(*files[4]);  // the most recent: still open, not opened again
    EXPECT_EQ(fds.opens(), 5u);
  }
  std::vector<FdCache::Handle> held;
  for (auto& f : files) held.push_back(fds.open(*f));
  EXPECT_EQ(fds.open_count(), 5u) << "descriptors in use stay open beyond the capacity";
  for (auto& h : held) EXPECT_NE(fcntl(h.fd(), F_GETFD), -1) << "a pinned descriptor was closed";
  std::uint8_t byte = 0;
  EXPECT_EQ(pread(held[0].fd(), &byte, 1, 0), files[0]->direct() ? -1 : 1) << "readable (O_DIRECT wants an aligned buffer)";
  held.clear();
  EXPECT_EQ(fds.open_count(), 2u) << "back to its capacity once no read uses them";
}

TEST(FdCache, RefusesAFileThatIsNoLongerTheOneListed) {
  TempFile t(100'000, 50);
  TableLayout layout;
  layout.segment_size = 64u << 10;
  auto file = listed(1, t.path, layout);
  FdCache fds(4);
  { auto ok = fds.open(*file); }
  // Another file of the same size renamed over it (a new version): another inode.
  const auto next = t.path.string() + ".new";
  std::filesystem::copy_file(t.path, next);
  std::filesystem::rename(next, t.path);
  FdCache fresh(4);
  EXPECT_THROW(fresh.open(*file), FileChanged);
  // The cache that already held the listed file's descriptor reads that version on, whole.
  auto kept = fds.open(*file);
  EXPECT_GE(kept.fd(), 0);
}

// A stale answer (its segment left the slot before it went out, with windows) is asked for again;
// when that refault fails, the answer must not carry the old entry: the client rejects a failure
// with an entry as undecodable and drops its connection instead of reporting the disk error.
TEST(SegmentChannel, SettleNeverCarriesAnEarlierEntry) {
  using proto::SegmentStatus;
  proto::SegmentNotify stale;
  stale.movie_index = 3;
  stale.segment = 17;
  stale.request_id = 99;
  stale.status = SegmentStatus::ok;
  stale.entry = proto::pack(proto::SegmentEntry{5, proto::SegmentState::resident, 12});
  stale.rkey = 0x1234;
  const proto::SegmentEntry now_resident{6, proto::SegmentState::resident, 40};
  for (const auto status : {SegmentStatus::disk_error, SegmentStatus::out_of_range, SegmentStatus::refused, SegmentStatus::unknown_movie,
                            SegmentStatus::busy, SegmentStatus::origin_error, SegmentStatus::changed}) {
    for (const auto rkey : {std::optional<std::uint32_t>(), std::optional<std::uint32_t>(0x77)}) {
      const auto n = ondemand::SegmentChannel::settle(stale, status, proto::SegmentEntry{}, rkey);
      const auto decoded = proto::decode_segment_notify(proto::encode(n));
      ASSERT_TRUE(decoded) << proto::to_string(status) << ": " << decoded.error().message;
      EXPECT_EQ(decoded->status, status);
      EXPECT_EQ(decoded->entry, 0u);
      EXPECT_EQ(decoded->rkey, 0u);
      EXPECT_EQ(decoded->request_id, 99u);
      EXPECT_EQ(decoded->segment, 17u);
    }
  }
  const auto ok = ondemand::SegmentChannel::settle(stale, SegmentStatus::ok, now_resident, 0x77);
  const auto decoded = proto::decode_segment_notify(proto::encode(ok));
  ASSERT_TRUE(decoded) << decoded.error().message;
  EXPECT_EQ(decoded->entry, proto::pack(now_resident));
  EXPECT_EQ(decoded->rkey, 0x77u);
  const auto windowed = ondemand::SegmentChannel::settle(stale, SegmentStatus::ok, now_resident, std::nullopt);
  EXPECT_EQ(windowed.rkey, 0u) << "with windows the rkey is its window's, set as it goes out";
}

}  // namespace
}  // namespace vod::server::cache
