// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's requests: what callers asked for (submit), oldest first, each filled from the
// block cache as its blocks arrive and completed when full. The planner reads them to decide what
// to fetch; the driver serves them and then runs their callbacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "engine/block_cache.hpp"
#include "vod/client/fetcher.hpp"

namespace vod::client::engine {

// A part of a request fetched straight into its destination (a direct transfer), never wider
// than one block: [from, to) in region offsets.
struct DirectPart {
  enum class State : std::uint8_t {
    in_flight,
    landed,
    stale,  // in flight, but for a region descriptor that changed: discarded when it completes
  };
  std::uint64_t from = 0, to = 0;
  State state = State::in_flight;
};

struct Request {
  std::uint64_t id;
  Region region;
  std::uint64_t offset;
  std::span<std::uint8_t> dest;  // clipped to the region's end
  std::size_t filled = 0;
  std::function<void(std::size_t)> done;
  bool waited = false;  // counted as a stall already
  bool direct = false;  // dest is registered memory (a BufferPool's): its blocks may be fetched into it
  // A direct Read of a request that is gone (cancelled) still lands in dest: nothing is fetched
  // into it or copied over it until it has (the driver sets this before each round).
  bool fenced = false;
  std::vector<DirectPart> parts;  // its direct fetches not yet served, in flight or landed

  // The direct part that covers region offset `at`, if any.
  const DirectPart* part_at(std::uint64_t at) const noexcept {
    for (const DirectPart& p : parts)
      if (at >= p.from && at < p.to) return &p;
    return nullptr;
  }
  // True when a direct part lies in block `block` (blocks of `chunk` bytes).
  bool has_part_in(std::uint64_t block, std::size_t chunk) const noexcept {
    for (const DirectPart& p : parts)
      if (p.from / chunk == block) return true;
    return false;
  }
};

class RequestQueue {
 public:
  using Callback = std::function<void(std::size_t bytes)>;
  // A request whose bytes are all in place, and how many: the caller runs it.
  using Finished = std::vector<std::pair<Callback, std::size_t>>;

  // Queues a read of dest.size() bytes (already clipped to the region) at `offset`; `direct`: dest
  // is registered memory that blocks may be fetched straight into.
  std::uint64_t submit(Region r, std::uint64_t offset, std::span<std::uint8_t> dest, Callback done, bool direct = false);
  Request* find(std::uint64_t id) noexcept;
  std::deque<Request>& requests() noexcept { return requests_; }
  void cancel(std::uint64_t id) noexcept;
  std::size_t size() const noexcept { return requests_.size(); }
  const std::deque<Request>& requests() const noexcept { return requests_; }

  // True when a request still needs block `key` (blocks of `chunk` bytes).
  bool needs(std::uint64_t key, std::size_t chunk) const noexcept;
  // True when a request still wants bytes of the movie.
  bool wants_movie() const noexcept;
  // True when a request into registered memory (direct) still wants bytes of the movie: the reader
  // advertises buffers ahead, and those are its read-ahead.
  bool direct_movie_waiting() const noexcept;
  // Marks every request as having waited; returns how many had not before (stalls).
  std::uint64_t mark_waiting() noexcept;

  // Copies what the cache holds (whole blocks, and landed heads of blocks still in flight) into
  // the requests, counts in what landed straight in them (direct parts), and takes out those now
  // full. `delivered` counts the bytes served, `copied` those of them copied out of the ring. The
  // caller runs the finished callbacks afterwards: a callback may submit or cancel.
  Finished serve(BlockCache& cache, const std::uint8_t* ring, std::size_t chunk, std::uint64_t& delivered, std::uint64_t& copied);

 private:
  std::deque<Request> requests_;
  std::uint64_t next_id_ = 1;
};

}  // namespace vod::client::engine
