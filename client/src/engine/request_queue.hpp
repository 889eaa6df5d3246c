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

struct Request {
  std::uint64_t id;
  Region region;
  std::uint64_t offset;
  std::span<std::uint8_t> dest;  // clipped to the region's end
  std::size_t filled = 0;
  std::function<void(std::size_t)> done;
  bool waited = false;  // counted as a stall already
};

class RequestQueue {
 public:
  using Callback = std::function<void(std::size_t bytes)>;
  // A request whose bytes are all in place, and how many: the caller runs it.
  using Finished = std::vector<std::pair<Callback, std::size_t>>;

  // Queues a read of dest.size() bytes (already clipped to the region) at `offset`.
  std::uint64_t submit(Region r, std::uint64_t offset, std::span<std::uint8_t> dest, Callback done);
  void cancel(std::uint64_t id) noexcept;
  std::size_t size() const noexcept { return requests_.size(); }
  const std::deque<Request>& requests() const noexcept { return requests_; }

  // True when a request still needs block `key` (blocks of `chunk` bytes).
  bool needs(std::uint64_t key, std::size_t chunk) const noexcept;
  // True when a request still wants bytes of the movie.
  bool wants_movie() const noexcept;
  // Marks every request as having waited; returns how many had not before (stalls).
  std::uint64_t mark_waiting() noexcept;

  // Copies what the cache holds (whole blocks, and landed heads of blocks still in flight) into
  // the requests, and takes out those now full. `delivered` counts the bytes copied. The caller runs
  // the finished callbacks afterwards: a callback may submit or cancel.
  Finished serve(BlockCache& cache, const std::uint8_t* ring, std::size_t chunk, std::uint64_t& delivered);

 private:
  std::deque<Request> requests_;
  std::uint64_t next_id_ = 1;
};

}  // namespace vod::client::engine
