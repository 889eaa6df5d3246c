// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's ordering rules, driven by a fetcher whose completions the test delivers by hand
// (the engine's own logic, without a NIC; the same rules run over real RDMA in vcr_test.cpp):
// after a seek the head Read is posted before the whole block and a request is served from the
// head as soon as it lands; requests go out before read-ahead; completions from before a seek are
// never delivered.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "vod/client/errors.hpp"
#include "vod/client/read_engine.hpp"

namespace vod::client {
namespace {

// A fetcher that records what the engine asks for and completes it when the test says so, filling
// the destination with the region's bytes (byte i of the region is i % 251) first.
class ManualFetcher final : public Fetcher {
 public:
  struct Fetch {
    std::uint32_t slot;
    Region region;
    std::uint64_t offset;
    std::uint32_t length;
    std::uint8_t* dest;
  };
  explicit ManualFetcher(bool ordered) : ordered_(ordered) {}
  void on_done(Done done) override { done_ = std::move(done); }
  void fetch(std::uint32_t slot, Region region, const proto::RegionDescriptor&, std::uint64_t offset, std::uint32_t length,
             std::uint8_t* dest) override {
    log_.push_back({slot, region, offset, length, dest});
    pending_.push_back(log_.back());
  }
  bool can_recall() const noexcept override { return false; }
  void forget(std::uint32_t) noexcept override {}
  bool ordered_partial_fetches() const noexcept override { return ordered_; }
  void poll() override {
    for (const Fetch& f : ready_) done_(f.slot, true, {});
    ready_.clear();
  }
  std::vector<int> wait_fds() const override { return {}; }
  int control_fd() const noexcept override { return -1; }
  void check_events() override {}
  void arm() override {}
  bool armed() const noexcept override { return true; }
  void consume() noexcept override {}
  unsigned depth() const noexcept override { return 8; }
  std::size_t max_fetch() const noexcept override { return 1u << 20; }

  // Completes the oldest pending fetch (as an RC QP would), with the region's bytes.
  Fetch complete_next() {
    Fetch f = pending_.front();
    pending_.erase(pending_.begin());
    for (std::uint32_t i = 0; i < f.length; ++i) f.dest[i] = static_cast<std::uint8_t>((f.offset + i) % 251);
    ready_.push_back(f);
    return f;
  }
  const std::vector<Fetch>& log() const noexcept { return log_; }
  std::size_t pending() const noexcept { return pending_.size(); }

 private:
  bool ordered_;
  Done done_;
  std::vector<Fetch> log_, pending_, ready_;
};

constexpr std::size_t kChunk = 64 * 1024;
constexpr std::uint64_t kMovie = 40 * kChunk + 123;

struct Rig {
  ReadEngine engine;
  ManualFetcher* fetcher;
  explicit Rig(bool ordered, std::size_t first_read = 16 * 1024) : engine(options(first_read)) {
    auto f = std::make_unique<ManualFetcher>(ordered);
    fetcher = f.get();
    engine.attach(std::move(f));
    engine.set_region(Region::movie, {0x1000, kMovie, 7});
  }
  static EngineOptions options(std::size_t first_read) {
    EngineOptions o;
    o.chunk_size = kChunk;
    o.readahead_bytes = 4 * kChunk;
    o.read_depth = 8;
    o.readahead_depth = 2;
    o.first_read_bytes = first_read;
    return o;
  }
};

bool bytes_ok(const std::vector<std::uint8_t>& buf, std::uint64_t at) {
  for (std::size_t i = 0; i < buf.size(); ++i)
    if (buf[i] != static_cast<std::uint8_t>((at + i) % 251)) return false;
  return true;
}

TEST(ReadEngineOrder, AfterASeekTheHeadGoesFirstAndServesTheReader) {
  Rig rig(true);
  const std::uint64_t at = 10 * kChunk + 5000;
  rig.engine.restart_at(at);
  std::vector<std::uint8_t> first(4096);
  bool done = false;
  rig.engine.submit(Region::movie, at, first, [&](std::size_t n) { done = n == first.size(); });
  rig.engine.progress(std::chrono::milliseconds(0));
  const auto& log = rig.fetcher->log();
  ASSERT_GE(log.size(), 2u);
  // The head: the page holding `at`, 16 KiB, into the slot's memory at the same offset; then the block.
  EXPECT_EQ(log[0].offset, 10 * kChunk + 4096);
  EXPECT_EQ(log[0].length, 16u * 1024);
  EXPECT_EQ(log[1].offset, 10 * kChunk);
  EXPECT_EQ(log[1].length, kChunk);
  EXPECT_EQ(log[0].dest, log[1].dest + 4096);
  EXPECT_GE(log[0].slot, 8u) << "a head's number lies past the ring's slots";
  for (std::size_t i = 2; i < log.size(); ++i) EXPECT_GT(log[i].offset, 10 * kChunk) << "read-ahead after the request's block";
  EXPECT_EQ(rig.engine.stats().head_reads, 1u);
  rig.fetcher->complete_next();  // only the head has landed
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_TRUE(done) << "the reader was not served from the head";
  EXPECT_TRUE(bytes_ok(first, at));
  // The rest of the block comes from the whole Read, and no second head is posted.
  std::vector<std::uint8_t> rest(kChunk);
  bool rest_done = false;
  rig.engine.submit(Region::movie, at + first.size(), rest, [&](std::size_t n) { rest_done = n == rest.size(); });
  for (int i = 0; i < 8 && !rest_done; ++i) {
    if (rig.fetcher->pending()) rig.fetcher->complete_next();
    rig.engine.progress(std::chrono::milliseconds(0));
  }
  EXPECT_TRUE(rest_done);
  EXPECT_TRUE(bytes_ok(rest, at + first.size()));
  EXPECT_EQ(rig.engine.stats().head_reads, 1u);
}

TEST(ReadEngineOrder, UnorderedFetchersGetWholeBlocksOnly) {
  Rig rig(false);
  rig.engine.restart_at(3 * kChunk);
  std::vector<std::uint8_t> buf(1000);
  rig.engine.submit(Region::movie, 3 * kChunk, buf, [](std::size_t) {});
  rig.engine.progress(std::chrono::milliseconds(0));
  ASSERT_FALSE(rig.fetcher->log().empty());
  EXPECT_EQ(rig.fetcher->log()[0].length, kChunk);
  EXPECT_EQ(rig.engine.stats().head_reads, 0u);
}

TEST(ReadEngineOrder, ALandingFromBeforeASeekIsNeverDelivered) {
  Rig rig(true);
  std::vector<std::uint8_t> old(1000);
  bool old_done = false;
  const std::uint64_t id = rig.engine.submit(Region::movie, 0, old, [&](std::size_t) { old_done = true; });
  rig.engine.progress(std::chrono::milliseconds(0));
  rig.engine.cancel(id);
  rig.engine.restart_at(20 * kChunk);  // the seek: the Reads at 0 are still in flight
  std::vector<std::uint8_t> fresh(2000);
  bool fresh_done = false;
  rig.engine.submit(Region::movie, 20 * kChunk, fresh, [&](std::size_t n) { fresh_done = n == fresh.size(); });
  for (int i = 0; i < 12 && !fresh_done; ++i) {
    if (rig.fetcher->pending()) rig.fetcher->complete_next();
    rig.engine.progress(std::chrono::milliseconds(0));
  }
  EXPECT_FALSE(old_done);
  ASSERT_TRUE(fresh_done);
  EXPECT_TRUE(bytes_ok(fresh, 20 * kChunk));
  EXPECT_GE(rig.engine.stats().stale_discarded, 1u);
}

}  // namespace
}  // namespace vod::client
