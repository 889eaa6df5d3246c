// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's ordering rules, driven by a fetcher whose completions the test delivers by hand
// (the engine's own logic, without a NIC; the same rules run over real RDMA in vcr_test.cpp):
// after a seek the head Read goes out alone and a request is served from it as soon as it lands;
// the rest of the block (never overlapping the head) and read-ahead follow only once a reader has
// taken from the head, on the next call (the serving call posts nothing behind it); a head nobody reads holds read-ahead back until the reader goes elsewhere;
// completions from before a seek are never delivered; the CM channel is looked at only after the
// caller's bytes were delivered and the head was posted.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "engine/fetch_id.hpp"
#include "manual_fetcher.hpp"
#include "vod/client/errors.hpp"
#include "vod/client/read_engine.hpp"

namespace vod::client {
namespace {

using engine::FetchId;

constexpr std::size_t kChunk = 64 * 1024;
constexpr std::uint64_t kMovie = 40 * kChunk + 123;

struct Rig {
  ReadEngine engine;
  ManualFetcher* fetcher;
  explicit Rig(bool in_parts, std::size_t first_read = 16 * 1024, unsigned depth = 8) : engine(test_engine_options(kChunk, first_read)) {
    auto f = std::make_unique<ManualFetcher>(in_parts, depth);
    fetcher = f.get();
    engine.attach(std::move(f));
    engine.set_region(Region::movie, {0x1000, kMovie, 7});
  }
};

bool bytes_ok(const std::vector<std::uint8_t>& buf, std::uint64_t at) {
  for (std::size_t i = 0; i < buf.size(); ++i)
    if (buf[i] != static_cast<std::uint8_t>((at + i) % 251)) return false;
  return true;
}

// Completes everything pending, with progress() between, until `done` or nothing is left.
void drain(Rig& rig, const bool& done) {
  for (int i = 0; i < 64 && !done; ++i) {
    if (rig.fetcher->pending()) rig.fetcher->complete_next();
    rig.engine.progress(std::chrono::milliseconds(0));
  }
}

TEST(ReadEngineOrder, AfterASeekTheHeadGoesAloneAndServesTheReader) {
  Rig rig(true);
  const std::size_t ring_slots = rig.engine.ring_bytes() / kChunk;
  const std::uint64_t at = 10 * kChunk + 5000;
  rig.engine.restart_at(at);
  std::vector<std::uint8_t> first(4096);
  bool done = false;
  rig.engine.submit(Region::movie, at, first, [&](std::size_t n) { done = n == first.size(); });
  rig.engine.progress(std::chrono::milliseconds(0));
  const auto& log = rig.fetcher->log();
  // The head alone: the page holding `at`, 16 KiB, its fetch id tagged as a head (engine::FetchId).
  ASSERT_EQ(log.size(), 1u) << "nothing is posted behind the head";
  EXPECT_EQ(log[0].offset, 10 * kChunk + 4096);
  EXPECT_EQ(log[0].length, 16u * 1024);
  const FetchId head = FetchId::unpack(log[0].slot);
  EXPECT_EQ(head.kind, FetchId::Kind::head);
  EXPECT_LT(head.index, ring_slots);
  EXPECT_EQ(rig.engine.stats().head_reads, 1u);
  rig.fetcher->complete_next();
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_TRUE(done) << "the reader was not served from the head";
  EXPECT_TRUE(bytes_ok(first, at));
  EXPECT_EQ(log.size(), 1u) << "the reader's bytes come back before anything is posted behind the head";
  // The next call, though it serves from the head again, posts the rest of the block around the
  // head, into the same slot, then read-ahead after it.
  std::vector<std::uint8_t> more(1000);
  bool more_done = false;
  rig.engine.submit(Region::movie, at + first.size(), more, [&](std::size_t n) { more_done = n == more.size(); });
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_TRUE(more_done);
  EXPECT_TRUE(bytes_ok(more, at + first.size()));
  ASSERT_GE(log.size(), 3u);
  const std::uint8_t* slot_mem = log[0].dest - 4096;
  EXPECT_EQ(log[1].offset, 10 * kChunk + 4096 + 16 * 1024);
  EXPECT_EQ(log[1].length, kChunk - 4096 - 16 * 1024);
  EXPECT_EQ(log[1].dest, slot_mem + 4096 + 16 * 1024);
  EXPECT_EQ(log[2].offset, 10 * kChunk);
  EXPECT_EQ(log[2].length, 4096u);
  EXPECT_EQ(log[2].dest, slot_mem);
  EXPECT_EQ(FetchId::unpack(log[2].slot), (FetchId{FetchId::Kind::before_head, head.index})) << "the part before the head, in its slot";
  EXPECT_EQ(FetchId::unpack(log[1].slot), (FetchId{FetchId::Kind::block, head.index})) << "the part after it";
  for (std::size_t i = 3; i < log.size(); ++i) {
    EXPECT_GE(log[i].offset, 11 * kChunk) << "read-ahead comes after the request's block";
    EXPECT_EQ(log[i].length, kChunk);
  }
  // The whole block, then the next, byte-exact; no second head.
  std::vector<std::uint8_t> rest(kChunk + 100);
  bool rest_done = false;
  rig.engine.submit(Region::movie, 10 * kChunk, rest, [&](std::size_t n) { rest_done = n == rest.size(); });
  drain(rig, rest_done);
  EXPECT_TRUE(rest_done);
  EXPECT_TRUE(bytes_ok(rest, 10 * kChunk));
  EXPECT_EQ(rig.engine.stats().head_reads, 1u);
}

TEST(ReadEngineOrder, AHeadNobodyReadsHoldsReadAheadBack) {
  Rig rig(true);
  rig.engine.prefetch(5 * kChunk);
  rig.engine.progress(std::chrono::milliseconds(0));
  ASSERT_EQ(rig.fetcher->log().size(), 1u);
  rig.fetcher->complete_next();
  for (int i = 0; i < 3; ++i) rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_EQ(rig.fetcher->log().size(), 1u) << "read-ahead went out before anyone read the head";
  // The reader comes: served from the head at once, then the rest and read-ahead follow.
  std::vector<std::uint8_t> buf(1000);
  bool done = false;
  rig.engine.submit(Region::movie, 5 * kChunk, buf, [&](std::size_t n) { done = n == buf.size(); });
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_TRUE(done);
  EXPECT_TRUE(bytes_ok(buf, 5 * kChunk));
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_GT(rig.fetcher->log().size(), 2u);
}

TEST(ReadEngineOrder, AReaderElsewhereReleasesTheHold) {
  Rig rig(true);
  rig.engine.prefetch(0);
  rig.engine.progress(std::chrono::milliseconds(0));
  rig.fetcher->complete_next();
  rig.engine.progress(std::chrono::milliseconds(0));
  // No seek announced: the reader simply asks for bytes far away.
  std::vector<std::uint8_t> buf(2 * kChunk);
  bool done = false;
  rig.engine.submit(Region::movie, 20 * kChunk, buf, [&](std::size_t n) { done = n == buf.size(); });
  drain(rig, done);
  ASSERT_TRUE(done);
  EXPECT_TRUE(bytes_ok(buf, 20 * kChunk));
  bool readahead = false;
  for (const auto& f : rig.fetcher->log()) readahead |= f.offset >= 22 * kChunk;
  EXPECT_TRUE(readahead) << "read-ahead stayed held by a head nobody read";
}

TEST(ReadEngineOrder, ASeekToTheBlockAlreadyThereKeepsIt) {
  Rig rig(true);
  rig.engine.prefetch(0);  // what an open does
  rig.engine.progress(std::chrono::milliseconds(0));
  rig.fetcher->complete_next();
  rig.engine.progress(std::chrono::milliseconds(0));
  rig.engine.restart_at(100);  // a player's first seek, into the head
  std::vector<std::uint8_t> buf(1000);
  bool done = false;
  rig.engine.submit(Region::movie, 100, buf, [&](std::size_t n) { done = n == buf.size(); });
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_TRUE(done) << "the seek threw the landed head away";
  EXPECT_TRUE(bytes_ok(buf, 100));
  EXPECT_EQ(rig.engine.stats().head_reads, 1u);
  // A whole block in flight at the seek still lands and serves the reader at its new position.
  std::vector<std::uint8_t> far(500);
  bool far_done = false;
  rig.engine.restart_at(30 * kChunk);
  rig.engine.submit(Region::movie, 30 * kChunk, far, [&](std::size_t n) { far_done = n == far.size(); });
  rig.engine.progress(std::chrono::milliseconds(0));  // its head
  rig.engine.restart_at(30 * kChunk + 10);            // the same block again, before anything landed
  drain(rig, far_done);
  ASSERT_TRUE(far_done);
  EXPECT_TRUE(bytes_ok(far, 30 * kChunk));
  EXPECT_EQ(rig.engine.stats().head_reads, 2u) << "the head was posted again";
}

TEST(ReadEngineOrder, OneReadInFlightMeansWholeBlocks) {
  // The rest around a mid-block head can take two Reads: a connection allowing one gets no head.
  Rig rig(true, 16 * 1024, 1);
  const std::uint64_t at = 6 * kChunk + 20000;
  rig.engine.restart_at(at);
  std::vector<std::uint8_t> buf(kChunk);
  bool done = false;
  rig.engine.submit(Region::movie, at, buf, [&](std::size_t n) { done = n == buf.size(); });
  drain(rig, done);
  ASSERT_TRUE(done);
  EXPECT_TRUE(bytes_ok(buf, at));
  EXPECT_EQ(rig.engine.stats().head_reads, 0u);
}

TEST(ReadEngineOrder, SeeksPastUnreadHeadsLeakNoSlots) {
  Rig rig(true);
  for (int i = 0; i < 40; ++i) {  // more seeks than the ring has slots
    rig.engine.restart_at(static_cast<std::uint64_t>(i % 30) * kChunk);
    rig.engine.prefetch(static_cast<std::uint64_t>(i % 30) * kChunk);
    rig.engine.progress(std::chrono::milliseconds(0));
    while (rig.fetcher->pending()) rig.fetcher->complete_next();
    rig.engine.progress(std::chrono::milliseconds(0));
  }
  std::vector<std::uint8_t> buf(3 * kChunk);
  bool done = false;
  rig.engine.restart_at(7 * kChunk);
  rig.engine.submit(Region::movie, 7 * kChunk, buf, [&](std::size_t n) { done = n == buf.size(); });
  drain(rig, done);
  ASSERT_TRUE(done);
  EXPECT_TRUE(bytes_ok(buf, 7 * kChunk));
}

TEST(ReadEngineOrder, FetchersWithoutPartsGetWholeBlocksOnly) {
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

// What Session does at an open: the movie's head goes out alone, at once; the catalog and the
// index, submitted after it, follow when it has landed; the reader is served from the head, and
// the rest of its block goes out only then.
TEST(ReadEngineOrder, AnOpenSendsTheHeadBeforeTheCatalogAndTheIndex) {
  Rig rig(true);
  rig.engine.set_region(Region::catalog, {0x9000, 3000, 8});
  rig.engine.set_region(Region::index, {0xa000, 5000, 9});
  rig.engine.prefetch(0);
  rig.engine.post_wanted();
  ASSERT_EQ(rig.fetcher->log().size(), 1u);
  EXPECT_EQ(rig.fetcher->log()[0].region, Region::movie);
  EXPECT_EQ(rig.fetcher->log()[0].offset, 0u);
  EXPECT_EQ(rig.fetcher->log()[0].length, 16u * 1024);
  std::vector<std::uint8_t> catalog(3000), index(5000);
  bool catalog_done = false, index_done = false;
  rig.engine.submit(Region::catalog, 0, catalog, [&](std::size_t) { catalog_done = true; });
  rig.engine.submit(Region::index, 0, index, [&](std::size_t) { index_done = true; });
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_EQ(rig.fetcher->log().size(), 1u) << "nothing goes out beside the head in flight";
  rig.fetcher->complete_next();
  rig.engine.progress(std::chrono::milliseconds(0));
  ASSERT_EQ(rig.fetcher->log().size(), 3u) << "the catalog and the index follow the landed head";
  EXPECT_EQ(rig.fetcher->log()[1].region, Region::catalog);
  EXPECT_EQ(rig.fetcher->log()[2].region, Region::index);
  std::vector<std::uint8_t> first(16 * 1024);
  bool first_done = false;
  rig.engine.submit(Region::movie, 0, first, [&](std::size_t n) { first_done = n == first.size(); });
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_TRUE(first_done) << "served from the head, with the catalog still in flight";
  EXPECT_TRUE(bytes_ok(first, 0));
  EXPECT_FALSE(catalog_done);
  rig.engine.progress(std::chrono::milliseconds(0));
  ASSERT_GE(rig.fetcher->log().size(), 4u);
  EXPECT_EQ(rig.fetcher->log()[3].region, Region::movie);
  EXPECT_EQ(rig.fetcher->log()[3].offset, 16u * 1024) << "the rest of the block, after the head";
  drain(rig, index_done);
  EXPECT_TRUE(catalog_done);
  EXPECT_TRUE(index_done);
  for (std::size_t i = 0; i < catalog.size(); ++i) ASSERT_EQ(catalog[i], static_cast<std::uint8_t>(i % 251));
}

// The look at the CM channel is a system call: a seek's head Read goes out before it, and the bytes
// of a landed head reach the caller before it.
TEST(ReadEngineOrder, TheCmChannelWaitsForTheHeadAndTheDelivery) {
  Rig rig(true);
  std::string& order = rig.fetcher->order();
  const std::uint64_t at = 3 * kChunk;
  rig.engine.restart_at(at);
  std::vector<std::uint8_t> first(4096);
  rig.engine.submit(Region::movie, at, first, [&](std::size_t) { order.push_back('d'); });
  order.clear();
  rig.engine.progress(std::chrono::milliseconds(0));
  EXPECT_EQ(order, "fc") << "f: the head posted, c: the CM channel, d: delivered";
  order.clear();
  rig.fetcher->complete_next();
  rig.engine.progress(std::chrono::milliseconds(0));
  ASSERT_FALSE(order.empty());
  EXPECT_EQ(order.substr(0, 1), "d") << order;
  EXPECT_EQ(order.back(), 'c') << order;
  EXPECT_TRUE(bytes_ok(first, at));
}

TEST(ReadEngineOrder, TheNextDeadlineCoversWhatNoFdAnnounces) {
  // An outside event loop (vod-proxy) sleeps on wait_fds() and next_deadline(): with fetches in
  // flight there is always a deadline (the stuck-Read check), the fetcher's own timer comes first
  // when sooner, and an idle engine has none.
  Rig rig(true);
  EXPECT_FALSE(rig.engine.next_deadline());
  std::vector<std::uint8_t> buf(kChunk);
  bool done = false;
  rig.engine.submit(Region::movie, 0, buf, [&](std::size_t n) { done = n == buf.size(); });
  rig.engine.progress(std::chrono::milliseconds(0));
  ASSERT_GT(rig.fetcher->pending(), 0u);
  auto before = ReadEngine::Clock::now();
  auto next = rig.engine.next_deadline();
  ASSERT_TRUE(next);
  EXPECT_GT(*next, before + std::chrono::seconds(10));  // the stuck-Read check, 15 s after the last progress
  EXPECT_LE(*next, before + std::chrono::seconds(16));
  rig.fetcher->set_timer(40);
  before = ReadEngine::Clock::now();
  next = rig.engine.next_deadline();
  ASSERT_TRUE(next);
  EXPECT_GE(*next, before + std::chrono::milliseconds(40));
  EXPECT_LT(*next, before + std::chrono::seconds(1));
  rig.fetcher->set_timer(-1);
  drain(rig, done);
  ASSERT_TRUE(done);
  for (int i = 0; i < 64 && rig.fetcher->pending(); ++i) {
    rig.fetcher->complete_next();
    rig.engine.progress(std::chrono::milliseconds(0));
  }
  EXPECT_EQ(rig.engine.stats().in_flight, 0u);
  EXPECT_FALSE(rig.engine.next_deadline());
  rig.engine.detach();
  EXPECT_FALSE(rig.engine.next_deadline());
  EXPECT_TRUE(rig.engine.wait_fds().empty());
}

}  // namespace
}  // namespace vod::client
