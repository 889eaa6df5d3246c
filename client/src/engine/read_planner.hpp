// SPDX-License-Identifier: LGPL-2.1-or-later
// What the read engine fetches next: a pure decider. From the cache, the requests, where the
// regions are, the ramp-up and read-ahead state and the depths, plan_reads() returns the fetches
// to make now, in order, and claims their slots in the (in-memory) cache. It does no I/O and reads
// no clock: the driver (read_engine.cpp) makes the fetches, and tests/unit/read_planner_test.cpp
// checks its decisions as a table.
//
// The rules, in the order they apply (read_engine.hpp explains why):
// 1. The ramp: after a start or a seek the first movie block a reader needs is fetched in parts.
//    Its head (first_read bytes, page-aligned, at the reader's offset) goes out alone, and nothing
//    is fetched behind it while it is in flight. Once it has landed, the rest of its block (one
//    fetch after the head, one before it) goes out when a reader has taken bytes from the head or
//    needs more of the block; a movie reader elsewhere drops the unread head instead.
// 2. Requests, oldest first, their blocks in order; a region without a descriptor waits, and so
//    does a fenced request (a cancelled request's direct Read still lands in its destination).
// 3. The block prefetch() announced, as a request's (with its head after a start).
// 4. While a head nobody has read is held, nothing more.
// 5. Read-ahead of the movie from readahead_from, at most readahead_depth fetches in flight, up to
//    the window, the limit (readahead_until) and the movie's end. Read-ahead never evicts read-ahead. None while a reader has
//    registered buffers waiting (direct requests): those are its read-ahead.
// Direct transfers (zero copy): a request whose destination is registered memory has the part of
// each of its blocks that it covers fetched straight into it, when that part is at least
// direct_min bytes, the block is neither cached nor coming into the ring, and it is not the ramp's
// head. Everything else (unaligned heads and tails below direct_min, cached bytes, the ramp's
// first block) goes through the ring and is copied: the engine switches per transfer.
// Nothing goes beyond `depth` fetches in flight. Ramp-up needs depth >= 2 and a fetcher that
// fetches in parts; otherwise blocks are fetched whole.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/block_cache.hpp"
#include "engine/request_queue.hpp"
#include "vod/protocol/region_descriptor.hpp"

namespace vod::client::engine {

inline constexpr std::uint64_t kNoHead = ~std::uint64_t{0};

// Where each region is (indexed by Region); a length of 0: not described yet.
using Regions = std::array<proto::RegionDescriptor, 3>;

// The engine's decisions that outlive one plan: changed by plan_reads() and by the engine (a seek
// sets ramp, prefetch() sets prefetch, a request moves readahead_from).
struct PlannerState {
  bool ramp = true;                  // the next movie block a reader needs gets a head (a start or seek happened)
  int ramp_slot = -1;                // the slot of this epoch's head, until the rest of its block is fetched
  std::uint64_t prefetch = kNoHead;  // a movie offset prefetch() announced, until fetched
  std::uint64_t readahead_from = 0;  // movie offset the read-ahead window starts at
  std::size_t readahead = 0;         // the read-ahead window, bytes
  bool readahead_enabled = true;
  // Read-ahead reads nothing from this movie offset on (the blocks holding bytes before it only):
  // a title's segment end, past which the next bytes may be another rendition's.
  std::uint64_t readahead_until = ~std::uint64_t{0};
};

struct PlannerLimits {
  unsigned depth = 1;            // fetches in flight at most
  unsigned readahead_depth = 1;  // read-ahead fetches in flight at most
  std::size_t chunk = 0;         // block size
  std::size_t first_read = 0;    // a head's bytes; 0: whole blocks only
  bool in_parts = false;         // the fetcher fetches a block in parts (Fetcher::fetches_in_parts)
  std::size_t direct_min = 0;    // the smallest direct transfer (the crossover); 0: none at all
};

struct FetchOrder {
  enum class Kind : std::uint8_t {
    whole,        // the whole block into `slot`
    head,         // a block's head, alone
    after_head,   // the rest of a ramped block, after its head
    before_head,  // the part of a ramped block before its head (a reader began mid-block)
    direct,       // straight into request `request`'s destination (slot unused)
  };
  Kind kind;
  std::size_t slot;
  Region region;
  std::uint64_t offset;  // within the region
  std::uint32_t length;
  bool readahead;             // for read-ahead, not for a waiting reader
  std::uint64_t request = 0;  // Kind::direct: the request whose destination it lands in

  bool operator==(const FetchOrder&) const = default;
};

// The fetches to make now, in order; their slots are claimed in `cache` (and a landed head whose
// block turned out to be whole is marked ready). `in_flight`: fetches in flight before these.
std::vector<FetchOrder> plan_reads(PlannerState& state, BlockCache& cache, const RequestQueue& requests, const Regions& regions,
                                   const PlannerLimits& limits, unsigned in_flight);

}  // namespace vod::client::engine
