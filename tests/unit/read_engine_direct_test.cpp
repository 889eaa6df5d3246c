// SPDX-License-Identifier: LGPL-2.1-or-later
// Direct transfers (zero copy) through the read engine, with a fetcher whose completions the test
// delivers by hand and which writes a Read's bytes only when it completes, as a NIC does: requests
// into a buffer pool's memory get their blocks fetched straight into them, small heads and tails go
// through the ring, Stats::bytes_copied says which, and a Read that cannot be recalled (cancelled,
// or from before a switch) never lands over bytes already delivered or in a buffer handed back. The
// pool poisons every buffer it gets back and checks the pattern when it hands it out again. The
// same paths run over real RDMA in tests/rdma/zero_copy_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "engine/direct_crossover.hpp"
#include "manual_fetcher.hpp"
#include "vod/client/buffer_pool.hpp"
#include "vod/client/read_engine.hpp"

namespace vod::client {
namespace {

constexpr std::size_t kChunk = 64 * 1024;
constexpr std::uint64_t kMovie = 40 * kChunk + 123;
constexpr std::size_t kCrossover = 16 * 1024;

struct Rig {
  ReadEngine engine;
  ManualFetcher* fetcher;
  std::shared_ptr<BufferPool> pool;
  explicit Rig(bool direct = true, std::size_t buffers = 4, std::size_t first_read = 0)
      : engine(test_engine_options(kChunk, first_read, direct)) {
    auto f = std::make_unique<ManualFetcher>(true, 8, kCrossover);
    fetcher = f.get();
    engine.attach(std::move(f));
    engine.set_region(Region::movie, {0x1000, kMovie, 7});
    BufferPoolOptions po;
    po.buffer_bytes = 4 * kChunk;
    po.buffers_per_arena = 2;
    po.max_buffers = buffers;
    po.poison = true;
    pool = BufferPool::make(po);
    engine.use_pool(pool);
  }
  bool in_ring(const std::uint8_t* p) const { return p >= engine.ring() && p < engine.ring() + engine.ring_bytes(); }
  // Completes everything pending, with progress() between, until `done`.
  void drain(const bool& done) {
    for (int i = 0; i < 200 && !done; ++i) {
      if (fetcher->pending()) fetcher->complete_next();
      engine.progress(std::chrono::milliseconds(0));
    }
  }
};

bool bytes_ok(std::span<const std::uint8_t> buf, std::uint64_t at) {
  for (std::size_t i = 0; i < buf.size(); ++i)
    if (buf[i] != static_cast<std::uint8_t>((at + i) % 251)) return false;
  return true;
}

std::size_t read_into(Rig& rig, std::span<std::uint8_t> dest, std::uint64_t at) {
  bool done = false;
  std::size_t got = 0;
  rig.engine.submit(Region::movie, at, dest, [&](std::size_t n) {
    done = true;
    got = n;
  });
  rig.drain(done);
  EXPECT_TRUE(done);
  return got;
}

TEST(ReadEngineDirect, AlignedBlocksLandStraightInTheBuffer) {
  Rig rig;
  ReadBuffer b = *rig.pool->take();
  ASSERT_EQ(read_into(rig, b.bytes(), 4 * kChunk), b.size());
  EXPECT_TRUE(bytes_ok(b.bytes(), 4 * kChunk));
  const Stats s = rig.engine.stats();
  EXPECT_EQ(s.bytes_delivered, 4 * kChunk);
  EXPECT_EQ(s.bytes_copied, 0u);
  EXPECT_EQ(s.direct_reads, 4u);
  for (const auto& f : rig.fetcher->log())  // read-ahead resumes into the ring once no buffer waits
    if (f.offset < 8 * kChunk) {
      EXPECT_FALSE(rig.in_ring(f.dest)) << "a fetch at " << f.offset << " went to the ring";
    }
}

TEST(ReadEngineDirect, HeadsAndTailsBelowTheCrossoverGoThroughTheRing) {
  Rig rig;
  ReadBuffer b = *rig.pool->take();
  // From 100 bytes into block 2 to 100 bytes into block 5: the first part (65436 bytes) and two
  // whole blocks are direct; the 100-byte tail is below the crossover and is copied from the ring.
  auto dest = b.bytes().first(3 * kChunk);
  ASSERT_EQ(read_into(rig, dest, 2 * kChunk + 100), dest.size());
  EXPECT_TRUE(bytes_ok(dest, 2 * kChunk + 100));
  const Stats s = rig.engine.stats();
  EXPECT_EQ(s.bytes_copied, 100u);
  EXPECT_EQ(s.direct_reads, 3u);
  // A read of what the ring now holds (the rest of block 5) is served from it: re-reads are copies.
  std::vector<std::uint8_t> rest(1000);
  ASSERT_EQ(read_into(rig, rest, 5 * kChunk + 100), rest.size());
  EXPECT_TRUE(bytes_ok(rest, 5 * kChunk + 100));
  EXPECT_EQ(rig.engine.stats().bytes_copied, 1100u);
  EXPECT_EQ(rig.engine.stats().direct_reads, 3u);
}

TEST(ReadEngineDirect, ForcedOffEverythingIsCopied) {
  Rig rig(false);
  EXPECT_FALSE(rig.engine.direct_active());
  ReadBuffer b = *rig.pool->take();
  ASSERT_EQ(read_into(rig, b.bytes(), 8 * kChunk), b.size());
  EXPECT_TRUE(bytes_ok(b.bytes(), 8 * kChunk));
  EXPECT_EQ(rig.engine.stats().bytes_copied, b.size());
  EXPECT_EQ(rig.engine.stats().direct_reads, 0u);
}

TEST(ReadEngineDirect, MemoryOutsideThePoolIsCopied) {
  Rig rig;
  std::vector<std::uint8_t> plain(2 * kChunk);
  ASSERT_EQ(read_into(rig, plain, 0), plain.size());
  EXPECT_TRUE(bytes_ok(plain, 0));
  EXPECT_EQ(rig.engine.stats().bytes_copied, plain.size());
}

TEST(ReadEngineDirect, TheRampsHeadStillGoesFirstThroughTheRing) {
  Rig rig(true, 4, 16 * 1024);
  ReadBuffer b = *rig.pool->take();
  bool done = false;
  rig.engine.submit(Region::movie, 0, b.bytes(), [&](std::size_t) { done = true; });
  rig.engine.progress(std::chrono::milliseconds(0));
  ASSERT_EQ(rig.fetcher->log().size(), 1u) << "the head goes alone";
  EXPECT_TRUE(rig.in_ring(rig.fetcher->log()[0].dest));
  EXPECT_EQ(rig.fetcher->log()[0].length, 16u * 1024);
  rig.drain(done);
  ASSERT_TRUE(done);
  EXPECT_TRUE(bytes_ok(b.bytes(), 0));
  EXPECT_EQ(rig.engine.stats().bytes_copied, kChunk) << "the first block, through the ring; the other three direct";
  EXPECT_EQ(rig.engine.stats().direct_reads, 3u);
}

TEST(ReadEngineDirect, AdvertisedBuffersAreTheReadAhead) {
  Rig rig;
  ReadBuffer a = *rig.pool->take(), b = *rig.pool->take();
  bool da = false, db = false;
  rig.engine.submit(Region::movie, 0, a.bytes(), [&](std::size_t) { da = true; });
  rig.engine.submit(Region::movie, 4 * kChunk, b.bytes(), [&](std::size_t) { db = true; });
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_EQ(rig.fetcher->log().size(), 8u) << "both buffers' blocks, at the full depth";
  for (const auto& f : rig.fetcher->log()) EXPECT_FALSE(rig.in_ring(f.dest)) << "the ring read ahead at " << f.offset;
  rig.drain(db);
  EXPECT_TRUE(da && db);
  EXPECT_TRUE(bytes_ok(a.bytes(), 0));
  EXPECT_TRUE(bytes_ok(b.bytes(), 4 * kChunk));
  EXPECT_EQ(rig.engine.stats().bytes_copied, 0u);
}

TEST(ReadEngineDirect, ACancelledReadFencesItsBufferUntilItLands) {
  Rig rig;
  ReadBuffer b = *rig.pool->take();
  const std::uint64_t id =
      rig.engine.submit(Region::movie, 8 * kChunk, b.bytes(), [](std::size_t) { ADD_FAILURE() << "a cancelled request completed"; });
  rig.engine.progress(std::chrono::milliseconds(0));
  ASSERT_EQ(rig.fetcher->pending(), 4u);
  // A seek: the reader cancels and reuses the same buffer at another offset, its bytes cached in the
  // ring already would be copied at once, so cache them first... here none are: the new request
  // must wait for the old Reads, which still write into the buffer.
  rig.engine.cancel(id);
  rig.engine.restart_at(20 * kChunk);
  bool done = false;
  rig.engine.submit(Region::movie, 20 * kChunk, b.bytes(), [&](std::size_t) { done = true; });
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_EQ(rig.fetcher->log().size(), 4u) << "nothing goes into a buffer an old Read still writes to";
  EXPECT_TRUE(rig.engine.has_block(Region::movie, 20 * kChunk) == false);
  rig.drain(done);
  ASSERT_TRUE(done);
  EXPECT_TRUE(bytes_ok(b.bytes(), 20 * kChunk)) << "an old Read landed over the new bytes";
  EXPECT_EQ(rig.engine.stats().stale_discarded, 4u);
  EXPECT_EQ(rig.engine.direct_in_flight(), 0u);
}

TEST(ReadEngineDirect, ABufferGivenBackMidReadIsNotHandedOutUntilItLands) {
  Rig rig(true, 1);
  ReadBuffer b = *rig.pool->take();
  const std::uint64_t id = rig.engine.submit(Region::movie, 0, b.bytes(), [](std::size_t) {});
  rig.engine.progress(std::chrono::milliseconds(0));
  rig.engine.cancel(id);
  b.release();  // a close: the reader lets go while four Reads are in flight
  EXPECT_FALSE(rig.pool->take()) << "the only buffer is still being written";
  EXPECT_EQ(rig.pool->figures().pinned, 1u);
  while (rig.fetcher->pending()) rig.fetcher->complete_next();
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_EQ(rig.pool->figures().pinned, 0u);
  auto again = rig.pool->take();
  ASSERT_TRUE(again);
  EXPECT_EQ(rig.pool->figures().poison_violations, 0u) << "written after it was freed";
}

TEST(ReadEngineDirect, ASwitchDiscardsDirectReadsInFlightAndFetchesAgain) {
  Rig rig;
  ReadBuffer b = *rig.pool->take();
  bool done = false;
  rig.engine.submit(Region::movie, 0, b.bytes(), [&](std::size_t) { done = true; });
  rig.engine.progress(std::chrono::milliseconds(0));
  ASSERT_EQ(rig.fetcher->pending(), 4u);
  rig.engine.set_region(Region::movie, {0x9000, kMovie, 11});  // another movie, the same size
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_EQ(rig.fetcher->log().size(), 4u) << "nothing is fetched again over Reads still landing";
  rig.drain(done);
  ASSERT_TRUE(done);
  const auto& log = rig.fetcher->log();
  EXPECT_EQ(std::count_if(log.begin(), log.end(), [&](const auto& f) { return f.offset < 4 * kChunk && !rig.in_ring(f.dest); }), 8)
      << "each block twice, straight into the buffer";
  EXPECT_EQ(rig.engine.stats().stale_discarded, 4u);
  EXPECT_TRUE(bytes_ok(b.bytes(), 0));
}

TEST(ReadEngineDirect, ALostConnectionKeepsItsBuffersPinnedUntilItIsGone) {
  Rig rig;
  ReadBuffer b = *rig.pool->take();
  rig.engine.submit(Region::movie, 0, b.bytes(), [](std::size_t) {});
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_EQ(rig.engine.direct_in_flight(), 4u);
  EXPECT_EQ(rig.pool->figures().pinned, 1u);
  rig.engine.detach();  // the fetcher goes; the QP (and the MRs) may still be alive
  EXPECT_EQ(rig.engine.direct_in_flight(), 0u);
  EXPECT_EQ(rig.pool->figures().pinned, 1u) << "a Read may still land until the connection is destroyed";
  const std::uint8_t* const pinned = b.data();
  b = ReadBuffer();  // the reader gives it back: not handed out again while pinned
  std::vector<ReadBuffer> others;
  while (auto o = rig.pool->take()) others.push_back(std::move(*o));
  EXPECT_EQ(others.size(), 3u);
  for (const ReadBuffer& o : others) EXPECT_NE(o.data(), pinned);
  rig.engine.release_pins();  // the connection is gone: nothing more lands
  EXPECT_EQ(rig.pool->figures().pinned, 0u);
  auto again = rig.pool->take();
  ASSERT_TRUE(again);
  EXPECT_EQ(again->data(), pinned);
  EXPECT_EQ(rig.pool->verify_poison(), 0u);
}

TEST(ReadEngineDirect, ABufferThatCannotBeRegisteredIsReadThroughTheRing) {
  Rig rig;
  rig.fetcher->throw_on_fetch = "registering a reader's buffer pool: Cannot allocate memory (RLIMIT_MEMLOCK)";
  rig.fetcher->ring_lo = rig.engine.ring();
  rig.fetcher->ring_hi = rig.engine.ring() + rig.engine.ring_bytes();
  ReadBuffer b = *rig.pool->take();
  rig.engine.submit(Region::movie, 0, b.bytes(), [](std::size_t) {});
  EXPECT_NO_THROW(rig.engine.progress(std::chrono::milliseconds(0)));
  EXPECT_EQ(rig.pool->figures().pinned, 0u) << "the failed direct Read left no pin";
  EXPECT_EQ(rig.engine.direct_in_flight(), 0u);
  EXPECT_FALSE(rig.engine.direct_active()) << "direct transfers stay off once registering failed";
  // Nothing was left half-issued: the requests are read through the ring, byte-exact, while
  // registering still fails.
  bool done = false;
  std::size_t got = 0;
  ReadBuffer c = *rig.pool->take();
  rig.engine.submit(Region::movie, 4096, c.bytes(), [&](std::size_t n) {
    done = true;
    got = n;
  });
  rig.drain(done);
  ASSERT_TRUE(done);
  EXPECT_EQ(got, c.size());
  for (std::size_t i = 0; i < got; ++i) ASSERT_EQ(c.data()[i], static_cast<std::uint8_t>((4096 + i) % 251)) << "at " << i;
  EXPECT_EQ(rig.engine.stats().direct_reads, 0u);
  EXPECT_GE(rig.engine.stats().bytes_copied, got);
}

TEST(BufferPool, GrowsByArenasUpToItsBound) {
  BufferPoolOptions o;
  o.buffer_bytes = 10000;  // rounded up to whole pages
  o.buffers_per_arena = 2;
  o.max_buffers = 3;
  auto pool = BufferPool::make(o);
  EXPECT_EQ(pool->buffer_bytes(), 12288u);
  std::vector<ReadBuffer> held;
  for (int i = 0; i < 3; ++i) {
    auto b = pool->take();
    ASSERT_TRUE(b);
    EXPECT_TRUE(pool->holds(b->data(), b->size()));
    EXPECT_FALSE(pool->holds(b->data(), b->size() + 1)) << "a range past the buffer's end";
    held.push_back(std::move(*b));
  }
  EXPECT_FALSE(pool->take());
  EXPECT_EQ(pool->figures().buffers, 3u);
  EXPECT_TRUE(pool->arena_of(held[0].data(), 100));
  EXPECT_NE(*pool->arena_of(held[0].data(), 100), *pool->arena_of(held[2].data(), 100));
  held.pop_back();
  EXPECT_TRUE(pool->take()) << "a buffer given back is taken again";
  std::uint8_t outside[16];
  EXPECT_FALSE(pool->holds(outside, sizeof outside));
}

TEST(BufferPool, PoisonShowsAWriteAfterTheBufferWasGivenBack) {
  BufferPoolOptions o;
  o.buffer_bytes = 4096;
  o.max_buffers = 1;
  o.poison = true;
  auto pool = BufferPool::make(o);
  std::uint8_t* p = nullptr;
  {
    ReadBuffer b = *pool->take();
    p = b.data();
  }
  p[4000] = 1;  // what a Read landing after the hand-back would do
  EXPECT_EQ(pool->verify_poison(), 1u);
  auto again = pool->take();
  EXPECT_EQ(pool->figures().poison_violations, 1u) << "re-poisoned when found, counted once";
}

TEST(DirectCrossover, ByDeviceKind) {
  struct Row {
    const char* device;
    std::size_t chunk, expect;
  };
  for (const Row& r : std::vector<Row>{{"rxe0", 256 << 10, 16 << 10},
                                       {"siw0", 256 << 10, 16 << 10},
                                       {"mlx5_0", 256 << 10, 256 << 10},
                                       {"mlx5_0", 128 << 10, 128 << 10},  // never wider than a block
                                       {"bnxt_re0", 1 << 20, 256 << 10},
                                       {"", 256 << 10, 256 << 10}}) {
    SCOPED_TRACE(r.device);
    EXPECT_EQ(engine::direct_crossover(r.device, r.chunk), r.expect);
  }
}

}  // namespace
}  // namespace vod::client
