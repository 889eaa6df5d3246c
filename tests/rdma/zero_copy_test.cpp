// SPDX-License-Identifier: LGPL-2.1-or-later
// Zero copy over real RDMA, against a vod-server vod_zero_copy_test.sh starts: reads into a
// session's registered buffers land there directly (Stats::bytes_copied stays near 0) or, forced
// off, through the ring (every byte copied), and both are byte-exact with direct and indirect
// transfers mixed: unaligned offsets and lengths around the crossover, seeks while direct Reads are
// in flight into the very buffer read next, a session closed with Reads in flight. Every buffer the
// pool gets back is poisoned (VOD_POISON_BUFFERS=1, set by the script) and checked when it is
// handed out again and at the end: ASan cannot see a NIC writing into memory handed back.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "pattern.hpp"
#include "vod/client/buffer_pool.hpp"
#include "vod/client/sequential_reads.hpp"
#include "vod/client/session.hpp"

namespace vod::client {
namespace {

using test::first_mismatch;

constexpr std::uint64_t kSizeA = 48ull * 1024 * 1024 + 5;  // pattern-a.bin, seed 1
constexpr std::size_t kChunk = 64 * 1024;

Uri movie_uri(const std::string& name) {
  const char* v = std::getenv("VOD_TEST_URI");
  if (!v) throw std::runtime_error("VOD_TEST_URI is not set: run through vod_zero_copy_test.sh");
  Uri u = parse_uri(v);
  u.movie = name;
  return u;
}

SessionOptions options(bool direct) {
  SessionOptions o;
  o.engine.chunk_size = kChunk;
  o.engine.readahead_bytes = 2u << 20;
  o.engine.read_depth = 16;
  o.engine.direct = direct;
  return o;
}

BufferPoolOptions pool_of(std::size_t bytes, std::size_t count) {
  BufferPoolOptions p;
  p.buffer_bytes = bytes;
  p.buffers_per_arena = count;
  p.max_buffers = count;
  p.poison = true;
  return p;
}

class ZeroCopy : public ::testing::TestWithParam<bool> {
 protected:
  static void SetUpTestSuite() {
    rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
    setrlimit(RLIMIT_MEMLOCK, &unlimited);
  }
  bool direct() const { return GetParam(); }
};

TEST_P(ZeroCopy, SequentialReadsAreByteExactAndCopyOnlyWhenForcedOff) {
  Session s(movie_uri("pattern-a.bin"), options(direct()));
  EXPECT_EQ(s.zero_copy_active(), false) << "no pool yet";
  std::uint64_t at = 0;
  {
    SequentialReads reads(s, 0, kSizeA, 4 * kChunk, SequentialReads::buffers_for(4 * kChunk, kChunk, s.read_depth()));
    EXPECT_EQ(s.zero_copy_active(), direct());
    while (auto piece = reads.next()) {
      ASSERT_EQ(piece->offset, at);
      ASSERT_EQ(first_mismatch(piece->buffer.data(), piece->bytes, at, 1), -1) << "in the piece at " << at;
      at += piece->bytes;
    }
  }
  EXPECT_EQ(at, kSizeA);
  const Stats st = s.stats();
  // The movie, and the catalog and keyframe index the session read behind its first bytes.
  EXPECT_GE(st.bytes_delivered, kSizeA);
  EXPECT_LT(st.bytes_delivered, kSizeA + (1u << 20));
  const double ratio = static_cast<double>(st.bytes_copied) / static_cast<double>(st.bytes_delivered);
  std::printf("zero copy %s: copied %llu of %llu bytes delivered (%.4f), %llu direct Reads of %llu\n", direct() ? "auto" : "off",
              static_cast<unsigned long long>(st.bytes_copied), static_cast<unsigned long long>(st.bytes_delivered), ratio,
              static_cast<unsigned long long>(st.direct_reads), static_cast<unsigned long long>(st.reads_posted));
  if (direct()) {
    EXPECT_LE(ratio, 0.05);
    EXPECT_GT(st.direct_reads, 0u);
  } else {
    EXPECT_EQ(st.bytes_copied, st.bytes_delivered);
    EXPECT_EQ(st.direct_reads, 0u);
  }
  EXPECT_EQ(s.buffers()->verify_poison(), 0u);
}

TEST_P(ZeroCopy, UnalignedReadsAroundTheCrossoverAreByteExact) {
  Session s(movie_uri("pattern-a.bin"), options(direct()));
  auto pool = s.buffers(pool_of(6 * kChunk, 2));
  std::mt19937_64 random(23);
  // Lengths from a byte to several blocks, around the crossover (16 KiB on Soft-RoCE and siw) and a
  // block; offsets anywhere, so heads, tails and whole blocks mix in one request.
  const std::size_t lengths[] = {1,          4095,   16 * 1024 - 1, 16 * 1024,        16 * 1024 + 1,
                                 kChunk - 1, kChunk, kChunk + 1,    3 * kChunk + 777, 6 * kChunk};
  for (int i = 0; i < 80; ++i) {
    ReadBuffer b = *pool->take();
    const std::size_t len = lengths[static_cast<std::size_t>(i) % std::size(lengths)];
    const std::uint64_t at = random() % (kSizeA - len);
    const std::size_t skew = (random() % 2) ? random() % 5000 : 0;  // the destination need not be aligned either
    auto dest = b.bytes().subspan(skew, std::min(len, b.size() - skew));
    ASSERT_EQ(s.pread(at, dest), dest.size());
    ASSERT_EQ(first_mismatch(dest.data(), dest.size(), at, 1), -1) << "read " << i << ": " << dest.size() << " bytes at " << at;
  }
  if (direct()) {
    EXPECT_GT(s.stats().direct_reads, 0u);
  }
  EXPECT_EQ(pool->verify_poison(), 0u);
}

TEST_P(ZeroCopy, SeeksWhileDirectReadsAreInFlightDeliverNoStaleByte) {
  Session s(movie_uri("pattern-a.bin"), options(direct()));
  auto pool = s.buffers(pool_of(8 * kChunk, 1));
  ReadBuffer b = *pool->take();
  std::mt19937_64 random(31);
  for (int i = 0; i < 40; ++i) {
    // Ask for a buffer's worth somewhere, let its Reads go out, then seek: cancel it and read
    // elsewhere into the same buffer while the old Reads are still landing in it.
    const std::uint64_t old_at = random() % (kSizeA - b.size());
    const std::uint64_t id = s.pread_async(old_at, b.bytes(), [](std::size_t) {});
    s.progress(std::chrono::milliseconds(0));
    s.cancel(id);
    const std::uint64_t at = random() % (kSizeA - b.size());
    s.engine().restart_at(at);
    ASSERT_EQ(s.pread(at, b.bytes()), b.size());
    ASSERT_EQ(first_mismatch(b.data(), b.size(), at, 1), -1) << "seek " << i << " from " << old_at << " to " << at;
  }
  std::printf("stale completions discarded: %llu of %llu Reads (%llu direct)\n", static_cast<unsigned long long>(s.stats().stale_discarded),
              static_cast<unsigned long long>(s.stats().reads_posted), static_cast<unsigned long long>(s.stats().direct_reads));
  if (direct()) {
    EXPECT_GT(s.stats().stale_discarded, 0u) << "no seek overtook a direct Read: the test proved nothing";
  }
  b.release();
  EXPECT_EQ(pool->verify_poison(), 0u);
}

TEST_P(ZeroCopy, AClosedSessionWritesNothingMore) {
  std::shared_ptr<BufferPool> pool;
  std::vector<ReadBuffer> held;
  {
    Session s(movie_uri("pattern-a.bin"), options(direct()));
    pool = s.buffers(pool_of(8 * kChunk, 6));
    for (int i = 0; i < 2; ++i) held.push_back(*pool->take());
    s.pread_async(0, held[0].bytes(), [](std::size_t) {});
    s.pread_async(8 * kChunk, held[1].bytes(), [](std::size_t) {});
    for (int i = 0; i < 3; ++i) {  // two buffers handed back with Reads in flight
      auto b = *pool->take();
      s.pread_async(static_cast<std::uint64_t>(16 + 8 * i) * kChunk, b.bytes(), [](std::size_t) {});
      if (i < 2) b.release();
      else held.push_back(std::move(b));
    }
    s.progress(std::chrono::milliseconds(0));
  }  // closed with Reads in flight: the QP goes first, and nothing lands after
  std::vector<std::vector<std::uint8_t>> before;
  for (const ReadBuffer& b : held) before.emplace_back(b.data(), b.data() + b.size());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  for (std::size_t i = 0; i < held.size(); ++i)
    EXPECT_EQ(std::memcmp(before[i].data(), held[i].data(), held[i].size()), 0) << "buffer " << i << " changed after the session closed";
  held.clear();
  EXPECT_EQ(pool->figures().pinned, 0u);
  EXPECT_EQ(pool->verify_poison(), 0u);
}

INSTANTIATE_TEST_SUITE_P(DirectAndForcedOff, ZeroCopy, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? std::string("auto") : std::string("off"); });

}  // namespace
}  // namespace vod::client
