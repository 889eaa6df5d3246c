// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's decider (client/src/engine/read_planner.hpp) as a table: the cache, the
// requests, the ramp-up and read-ahead state and the depths in; the fetches it orders, in order,
// out. These are the rules read_engine_order_test.cpp checks through the engine (and vcr_test.cpp
// over RDMA): after a seek the head goes alone, nothing goes behind a head nobody has read, a read
// head releases the rest of its block and read-ahead, read-ahead stays within its depth, its window
// and the movie, and eviction takes the least recently used block a reader does not need.
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "engine/block_cache.hpp"
#include "engine/read_planner.hpp"
#include "engine/request_queue.hpp"
#include "rdma/segment_reader.hpp"

namespace vod::client::engine {

void PrintTo(const FetchOrder& o, std::ostream* os) {
  static const char* const kinds[] = {"whole", "head", "after_head", "before_head", "direct"};
  *os << kinds[static_cast<int>(o.kind)] << "{slot " << o.slot << ", region " << static_cast<int>(o.region) << ", offset " << o.offset
      << ", length " << o.length << (o.readahead ? ", read-ahead" : "")
      << (o.kind == FetchOrder::Kind::direct ? ", request " + std::to_string(o.request) : "") << "}";
}

namespace {

constexpr std::size_t K = 64 * 1024;            // the chunk
constexpr std::uint64_t kMovie = 40 * K + 123;  // 41 blocks, the last one 123 bytes
constexpr std::uint32_t kHead = 16 * 1024;

using Kind = FetchOrder::Kind;
constexpr Region M = Region::movie;

// A slot the row starts with.
struct Held {
  enum What { ready, in_flight, readahead_in_flight, head_in_flight, head_landed, head_read } what;
  std::size_t slot;
  std::uint64_t block;             // of the movie
  std::uint64_t last_use = 0;      // 0: as claimed
  std::uint32_t head_from = 4096;  // for the head states
};

struct Want {
  Region region;
  std::uint64_t offset;
  std::size_t bytes;
  bool direct = false;  // into registered memory
};

struct Row {
  const char* what = "";
  PlannerState state = {};
  std::vector<Held> cache = {};
  std::vector<Want> requests = {};
  std::vector<FetchOrder> expect = {};
  unsigned in_flight = 0;
  PlannerLimits limits{8, 2, K, kHead, true};
  std::size_t slots = 6;
  std::uint64_t index_length = 5000;  // 0: the index is not described yet
  std::function<void(const BlockCache&, const PlannerState&)> then = nullptr;
};

PlannerState state(bool ramp, std::uint64_t readahead_from, std::size_t readahead = 4 * K, int ramp_slot = -1) {
  PlannerState s;
  s.ramp = ramp;
  s.readahead_from = readahead_from;
  s.readahead = readahead;
  s.ramp_slot = ramp_slot;
  return s;
}

PlannerState no_readahead(bool ramp = false, int ramp_slot = -1) {
  PlannerState s = state(ramp, 0, 0, ramp_slot);
  s.readahead_enabled = false;
  return s;
}

void hold(BlockCache& cache, const Held& h) {
  const std::uint64_t at = h.block * K;
  const auto length = static_cast<std::uint32_t>(std::min<std::uint64_t>(K, kMovie - at));
  Slot& s = cache.claim(h.slot, block_key(M, h.block), length, h.what == Held::readahead_in_flight);
  if (h.last_use) s.last_use = h.last_use;
  switch (h.what) {
    case Held::ready: s.state = SlotState::ready; break;
    case Held::in_flight:
    case Held::readahead_in_flight: s.parts = 1; break;
    case Held::head_in_flight:
    case Held::head_landed:
    case Held::head_read:
      s.head_from = h.head_from;
      s.head_to = std::min(h.head_from + kHead, length);
      s.head_in_flight = h.what == Held::head_in_flight;
      s.head_ready = !s.head_in_flight;
      s.head_used = h.what == Held::head_read;
      break;
  }
}

TEST(ReadPlanner, Table) {
  const std::vector<Row> rows = {
      {.what = "after a seek the head goes alone, page-aligned at the reader",
       .state = state(true, 10 * K + 5000),
       .requests = {{M, 10 * K + 5000, 4096}, {M, 20 * K, 1000}},
       .expect = {{Kind::head, 0, M, 10 * K + 4096, kHead, false}},
       .then =
           [](const BlockCache&, const PlannerState& st) {
             EXPECT_EQ(st.ramp_slot, 0);
             EXPECT_FALSE(st.ramp);
           }},
      {.what = "nothing goes behind a head in flight",
       .state = state(false, 10 * K + 5000, 4 * K, 0),
       .cache = {{Held::head_in_flight, 0, 10}},
       .requests = {{M, 10 * K + 5000, 4096}, {M, 20 * K, 1000}, {Region::catalog, 0, 3000}},
       .expect = {}},
      {.what = "a head a reader took from: the rest of its block (after, then before it), then read-ahead",
       .state = state(false, 10 * K + 5000, 4 * K, 0),
       .cache = {{Held::head_read, 0, 10}},
       .expect = {{Kind::after_head, 0, M, 10 * K + 4096 + kHead, K - 4096 - kHead, false},
                  {Kind::before_head, 0, M, 10 * K, 4096, false},
                  {Kind::whole, 1, M, 11 * K, K, true},
                  {Kind::whole, 2, M, 12 * K, K, true}},
       .then =
           [](const BlockCache& c, const PlannerState& st) {
             EXPECT_EQ(st.ramp_slot, -1);
             EXPECT_EQ(c.slot(0).parts, 2);
           }},
      {.what = "a reader that needs more of the block than its head releases the rest before taking a byte",
       .state = no_readahead(false, 0),
       .cache = {{Held::head_landed, 0, 10, 0, 0}},
       .requests = {{M, 10 * K + 30000, 100}},
       .expect = {{Kind::after_head, 0, M, 10 * K + kHead, K - kHead, false}}},
      {.what = "a head nobody has read holds read-ahead back",
       .state = state(false, 5 * K, 4 * K, 0),
       .cache = {{Held::head_landed, 0, 5, 0, 0}},
       .expect = {}},
      {.what = "a movie reader elsewhere drops the unread head and releases the hold (no second head)",
       .state = state(false, 20 * K, 4 * K, 0),
       .cache = {{Held::head_landed, 0, 5, 0, 0}},
       .requests = {{M, 20 * K, 1000}},
       .expect = {{Kind::whole, 0, M, 20 * K, K, false}, {Kind::whole, 1, M, 21 * K, K, true}, {Kind::whole, 2, M, 22 * K, K, true}}},
      {.what = "a head that is its whole block becomes ready without another fetch",
       .state = no_readahead(false, 0),
       .cache = {{Held::head_read, 0, 40, 0, 0}},
       .expect = {},
       .then =
           [](const BlockCache& c, const PlannerState& st) {
             EXPECT_EQ(c.slot(0).state, SlotState::ready);
             EXPECT_EQ(st.ramp_slot, -1);
           }},
      {.what = "requests oldest first: the catalog, then the index, in whole blocks",
       .state = no_readahead(),
       .requests = {{Region::catalog, 0, 3000}, {Region::index, 0, 5000}},
       .expect = {{Kind::whole, 0, Region::catalog, 0, 3000, false}, {Kind::whole, 1, Region::index, 0, 5000, false}}},
      {.what = "a region with no descriptor yet waits; the others go",
       .state = no_readahead(),
       .requests = {{Region::index, 0, 5000}, {Region::catalog, 0, 3000}},
       .expect = {{Kind::whole, 0, Region::catalog, 0, 3000, false}},
       .index_length = 0},
      {.what = "prefetch after a start: its head, alone",
       .state =
           [] {
             PlannerState s = state(true, 0);
             s.prefetch = 0;
             return s;
           }(),
       .expect = {{Kind::head, 0, M, 0, kHead, false}},
       .then = [](const BlockCache&, const PlannerState& st) { EXPECT_EQ(st.prefetch, kNoHead); }},
      {.what = "prefetch behind a request's blocks, then read-ahead",
       .state =
           [] {
             PlannerState s = state(false, 30 * K, 2 * K);
             s.prefetch = 30 * K;
             return s;
           }(),
       .requests = {{Region::catalog, 0, 3000}},
       .expect = {{Kind::whole, 0, Region::catalog, 0, 3000, false},
                  {Kind::whole, 1, M, 30 * K, K, false},
                  {Kind::whole, 2, M, 31 * K, K, true},
                  {Kind::whole, 3, M, 32 * K, K, true}}},
      {.what = "read-ahead stops at readahead_depth",
       .state = state(false, 0, 8 * K),
       .expect = {{Kind::whole, 0, M, 0, K, true}, {Kind::whole, 1, M, K, K, true}}},
      {.what = "read-ahead already in flight counts against readahead_depth",
       .state = state(false, 0, 8 * K),
       .cache = {{Held::readahead_in_flight, 0, 0}},
       .expect = {{Kind::whole, 1, M, K, K, true}}},
      {.what = "read-ahead stops at the movie's end (the last block is short)",
       .state = state(false, 39 * K, 4 * K),
       .expect = {{Kind::whole, 0, M, 39 * K, K, true}, {Kind::whole, 1, M, 40 * K, 123, true}},
       .limits = {8, 3, K, kHead, true}},
      {.what = "read-ahead stops at its limit: the block holding the limit's last byte, no further (a title's segment end)",
       .state =
           [] {
             PlannerState s = state(false, 10 * K, 8 * K);
             s.readahead_until = 11 * K + 1;
             return s;
           }(),
       .expect = {{Kind::whole, 0, M, 10 * K, K, true}, {Kind::whole, 1, M, 11 * K, K, true}},
       .limits = {8, 4, K, kHead, true}},
      {.what = "a limit at a block's start: that block is not read ahead",
       .state =
           [] {
             PlannerState s = state(false, 10 * K, 8 * K);
             s.readahead_until = 11 * K;
             return s;
           }(),
       .expect = {{Kind::whole, 0, M, 10 * K, K, true}},
       .limits = {8, 4, K, kHead, true}},
      {.what = "nothing beyond the depth", .state = state(true, 3 * K), .requests = {{M, 3 * K, 1000}}, .expect = {}, .in_flight = 8},
      {.what = "a depth of 1: whole blocks, no head (the rest around a head can take two Reads)",
       .state = state(true, 6 * K + 20000),
       .requests = {{M, 6 * K + 20000, K}},
       .expect = {{Kind::whole, 0, M, 6 * K, K, false}},
       .limits = {1, 1, K, kHead, true}},
      {.what = "a fetcher that does not fetch in parts (UDP): whole blocks, then read-ahead",
       .state = state(true, 3 * K),
       .requests = {{M, 3 * K, 1000}},
       .expect = {{Kind::whole, 0, M, 3 * K, K, false}, {Kind::whole, 1, M, 4 * K, K, true}, {Kind::whole, 2, M, 5 * K, K, true}},
       .limits = {8, 2, K, kHead, false}},
      {.what = "first_read 0: whole blocks only",
       .state = state(true, 3 * K, 0),
       .requests = {{M, 3 * K + 100, 1000}},
       .expect = {{Kind::whole, 0, M, 3 * K, K, false}},
       .limits = {8, 2, K, 0, true}},
      {.what = "a full cache: a request evicts the least recently used block",
       .state = no_readahead(),
       .cache = {{Held::ready, 0, 0, 6},
                 {Held::ready, 1, 1, 5},
                 {Held::ready, 2, 2, 4},
                 {Held::ready, 3, 3, 1},
                 {Held::ready, 4, 4, 3},
                 {Held::ready, 5, 5, 2}},
       .requests = {{M, 30 * K, 100}},
       .expect = {{Kind::whole, 3, M, 30 * K, K, false}}},
      {.what = "a full cache: never a block a request still needs",
       .state = no_readahead(),
       .cache = {{Held::ready, 0, 0, 6},
                 {Held::ready, 1, 1, 5},
                 {Held::ready, 2, 2, 4},
                 {Held::ready, 3, 3, 1},
                 {Held::ready, 4, 4, 3},
                 {Held::ready, 5, 5, 2}},
       .requests = {{M, 3 * K + 10, 100}, {M, 30 * K, 100}},
       .expect = {{Kind::whole, 5, M, 30 * K, K, false}}},
      {.what =
           "zero copy: the parts of a registered request's blocks at least the crossover go straight into it, a smaller tail to the ring",
       .state = state(false, 2 * K),
       .requests = {{M, 2 * K + 100, 3 * K, true}},
       .expect = {{Kind::direct, 0, M, 2 * K + 100, K - 100, false, 1},
                  {Kind::direct, 0, M, 3 * K, K, false, 1},
                  {Kind::direct, 0, M, 4 * K, K, false, 1},
                  {Kind::whole, 0, M, 5 * K, K, false}},
       .limits = {8, 2, K, kHead, true, 16 * 1024}},
      {.what = "zero copy: a block cached in the ring is copied, not fetched again; read-ahead waits while a registered request waits",
       .state = state(false, 3 * K),
       .cache = {{Held::ready, 0, 3}},
       .requests = {{M, 3 * K, 2 * K, true}},
       .expect = {{Kind::direct, 0, M, 4 * K, K, false, 1}},
       .limits = {8, 2, K, kHead, true, 16 * 1024}},
      {.what = "zero copy: after a seek the first block still gets its head through the ring, alone",
       .state = state(true, 3 * K),
       .requests = {{M, 3 * K, 2 * K, true}},
       .expect = {{Kind::head, 0, M, 3 * K, kHead, false}},
       .limits = {8, 2, K, kHead, true, 16 * 1024}},
      {.what = "zero copy off (no crossover): a registered request's blocks go to the ring",
       .state = no_readahead(),
       .requests = {{M, 3 * K, K, true}},
       .expect = {{Kind::whole, 0, M, 3 * K, K, false}}},
      {.what = "a full cache: read-ahead never evicts read-ahead, however recently the outsider was used",
       .state = state(false, 10 * K, 8 * K),
       .cache = {{Held::ready, 0, 2, 9},
                 {Held::ready, 1, 10, 1},
                 {Held::ready, 2, 11, 2},
                 {Held::ready, 3, 12, 3},
                 {Held::ready, 4, 13, 4},
                 {Held::ready, 5, 14, 5}},
       .expect = {{Kind::whole, 0, M, 15 * K, K, true}}},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    BlockCache cache(row.slots);
    for (const Held& h : row.cache) hold(cache, h);
    RequestQueue requests;
    std::vector<std::vector<std::uint8_t>> buffers;
    buffers.reserve(row.requests.size());
    for (const Want& w : row.requests) {
      buffers.emplace_back(w.bytes);
      requests.submit(w.region, w.offset, buffers.back(), nullptr, w.direct);
    }
    const Regions regions = {proto::RegionDescriptor{0x1000, kMovie, 7}, proto::RegionDescriptor{0x9000, 3000, 8},
                             proto::RegionDescriptor{0xa000, row.index_length, 9}};
    PlannerState st = row.state;
    const auto orders = plan_reads(st, cache, requests, regions, row.limits, row.in_flight);
    EXPECT_EQ(orders, row.expect);
    for (const FetchOrder& o : orders) {
      if (o.kind == Kind::direct) continue;  // no slot
      EXPECT_EQ(cache.slot(o.slot).state, SlotState::in_flight) << "an ordered fetch's slot is claimed";
      EXPECT_EQ(cache.find(cache.slot(o.slot).key).value_or(999), o.slot);
    }
    if (row.then) row.then(cache, st);
  }
}

// Ordering against a recorded plan: each call plans only what the last one left, so planning twice
// with nothing landed orders nothing new.
TEST(ReadPlanner, PlanningAgainOrdersNothingTwice) {
  BlockCache cache(6);
  RequestQueue requests;
  std::vector<std::uint8_t> buf(1000);
  requests.submit(M, 3 * K, buf, nullptr);
  const Regions regions = {proto::RegionDescriptor{0x1000, kMovie, 7}, {}, {}};
  PlannerState st = state(false, 3 * K);
  const PlannerLimits limits{8, 2, K, kHead, false};
  const auto first = plan_reads(st, cache, requests, regions, limits, 0);
  ASSERT_EQ(first.size(), 3u);
  EXPECT_TRUE(plan_reads(st, cache, requests, regions, limits, 3).empty());
}

}  // namespace
}  // namespace vod::client::engine

namespace vod::client {
namespace {

// The SegmentReader's parts (rdma/segment_reader.hpp): where a dispatched part goes, and which
// completion a part in each state may take.
TEST(SegmentReaderParts, ADispatchedPartIsParkedThrottledOrPosted) {
  struct Case {
    bool resident, room;
    PartRoute want;
  };
  const Case cases[] = {
      {false, false, PartRoute::park},  // absent: asked for, whatever the room
      {false, true, PartRoute::park},
      {true, false, PartRoute::throttle},  // resident, no room: waits for a Read to complete
      {true, true, PartRoute::post},
  };
  for (const Case& c : cases) EXPECT_EQ(route_part(c.resident, c.room), c.want) << c.resident << c.room;
  const PartState all[] = {PartState::free,      PartState::starved, PartState::waiting_table, PartState::parked,
                           PartState::throttled, PartState::reading, PartState::data_landed};
  for (PartState s : all) {
    EXPECT_EQ(takes_data(s), s == PartState::reading) << to_string(s);
    EXPECT_EQ(takes_check(s), s == PartState::data_landed) << to_string(s) << ": a check before its data Read is a broken connection";
  }
}

}  // namespace
}  // namespace vod::client
