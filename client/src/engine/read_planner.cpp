// SPDX-License-Identifier: LGPL-2.1-or-later
#include "engine/read_planner.hpp"

#include <algorithm>

#include "engine/ring_sizing.hpp"

namespace vod::client::engine {

namespace {

// One call of plan_reads(): its inputs, and the fetches decided so far.
class Planning {
 public:
  Planning(PlannerState& state, BlockCache& cache, const RequestQueue& requests, const Regions& regions, const PlannerLimits& limits,
           unsigned in_flight)
      : st_(state), cache_(cache), requests_(requests), regions_(regions), lim_(limits), in_flight_(in_flight) {}

  std::vector<FetchOrder> run() {
    choose();
    return std::move(orders_);
  }

 private:
  const proto::RegionDescriptor& region(Region r) const noexcept { return regions_[static_cast<std::size_t>(r)]; }

  bool in_readahead_window(std::uint64_t key) const noexcept {
    const std::uint64_t first = st_.readahead_from / lim_.chunk;
    const std::uint64_t last = (st_.readahead_from + st_.readahead) / lim_.chunk;
    return key >= block_key(Region::movie, first) && key <= block_key(Region::movie, last);
  }

  // A block a request still needs is never evicted; nor, for read-ahead, one in the window.
  int take_slot(bool for_request) {
    return cache_.take_slot(
        [&](const Slot& s) { return requests_.needs(s.key, lim_.chunk) || (!for_request && in_readahead_window(s.key)); });
  }

  // Fetches `block` (whole, or its head at `head_at`) into a slot. False: no slot to take.
  bool post(Region r, std::uint64_t block, bool for_request, std::uint64_t head_at) {
    const int s = take_slot(for_request);
    if (s < 0) return false;
    const auto slot_index = static_cast<std::size_t>(s);
    const std::uint64_t at = block * lim_.chunk;
    const auto length = static_cast<std::uint32_t>(std::min<std::uint64_t>(lim_.chunk, region(r).length - at));
    Slot& slot = cache_.claim(slot_index, block_key(r, block), length, !for_request);
    if (head_at != kNoHead) {
      // Only the head now: page-aligned within the block, first_read bytes (less at the block's
      // end). post_rest() fetches the rest once a reader has come for it.
      const auto from = static_cast<std::uint32_t>((head_at - at) / kPage * kPage);
      const auto to = static_cast<std::uint32_t>(std::min<std::uint64_t>(from + lim_.first_read, length));
      orders_.push_back({FetchOrder::Kind::head, slot_index, r, at + from, to - from, !for_request});
      slot.head_from = from;
      slot.head_to = to;
      slot.head_in_flight = true;
      st_.ramp_slot = s;
    } else {
      orders_.push_back({FetchOrder::Kind::whole, slot_index, r, at, length, !for_request});
      slot.parts = 1;
    }
    ++in_flight_;
    return true;
  }

  // The parts of a ramped block around its landed head. False: no room in the depth now.
  bool post_rest(std::size_t s) {
    Slot& slot = cache_.slot(s);
    const unsigned parts = (slot.head_to < slot.length ? 1u : 0u) + (slot.head_from > 0 ? 1u : 0u);
    if (in_flight_ + parts > lim_.depth) return false;
    const Region r = region_of(slot.key);
    const std::uint64_t at = block_of(slot.key) * lim_.chunk;
    if (slot.head_to < slot.length)
      orders_.push_back({FetchOrder::Kind::after_head, s, r, at + slot.head_to, slot.length - slot.head_to, slot.readahead});
    if (slot.head_from > 0) orders_.push_back({FetchOrder::Kind::before_head, s, r, at, slot.head_from, slot.readahead});
    slot.parts = static_cast<std::uint8_t>(parts);
    in_flight_ += parts;
    if (parts == 0) slot.state = SlotState::ready;  // the head was the whole block
    return true;
  }

  // The part of block `b` that request q covers, straight into q's destination, when it is at least
  // the crossover. False when it is not (the block then goes through the ring). A full depth
  // counts as posted: nothing else of q goes out now either.
  bool post_direct(const Request& q, std::uint64_t b) {
    if (lim_.direct_min == 0) return false;
    const std::uint64_t from = std::max(b * lim_.chunk, q.offset + q.filled);
    const std::uint64_t to = std::min({(b + 1) * lim_.chunk, q.offset + q.dest.size(), region(q.region).length});
    if (to <= from || to - from < lim_.direct_min) return false;
    if (in_flight_ >= lim_.depth) return true;
    orders_.push_back({FetchOrder::Kind::direct, 0, q.region, from, static_cast<std::uint32_t>(to - from), false, q.id});
    ++in_flight_;
    if (q.region == Region::movie) st_.ramp = false;
    return true;
  }

  // A block someone waits for (a request's, or prefetch()'s), with a head at `head_at` when it is
  // the first movie block after a start or seek (else the head is dropped). False: no room now.
  bool post_demand(Region r, std::uint64_t block, std::uint64_t head_at) {
    if (r != Region::movie || !st_.ramp) head_at = kNoHead;
    if (in_flight_ >= lim_.depth || !post(r, block, true, head_at)) return false;
    if (r == Region::movie) st_.ramp = false;
    return true;
  }

  void choose() {
    // 1. The ramp: nothing behind a head in flight; once it has landed, the rest of its block goes
    // out when a reader has taken from it or needs more of the block.
    if (st_.ramp_slot >= 0) {
      const auto h = static_cast<std::size_t>(st_.ramp_slot);
      const Slot& head = cache_.slot(h);
      if (head.head_in_flight) return;
      if (head.head_used || requests_.needs(head.key, lim_.chunk)) {
        if (!post_rest(h)) return;
        st_.ramp_slot = -1;
      } else if (requests_.wants_movie()) {
        cache_.drop(h);  // the reader went elsewhere: the unread head holds nothing back any more
        st_.ramp_slot = -1;
      }
    }
    // 2. Requests first, oldest first: their blocks in order. Ramp-up needs two fetches in flight:
    // the rest of a block around a head is up to two parts.
    const bool can_ramp = lim_.first_read > 0 && lim_.depth >= 2 && lim_.in_parts;
    for (const Request& q : requests_.requests()) {
      // A region without a descriptor (the new connection has not described it yet) waits.
      if (q.dest.empty() || q.fenced || region(q.region).length <= q.offset + q.filled) continue;
      const std::uint64_t last = (q.offset + q.dest.size() - 1) / lim_.chunk;
      for (std::uint64_t b = (q.offset + q.filled) / lim_.chunk; b <= last; ++b) {
        if (q.direct && q.has_part_in(b, lim_.chunk)) continue;  // fetched into it already, or a stale fetch still writing there
        if (cache_.cached_or_coming(block_key(q.region, b))) continue;
        const bool first = b == (q.offset + q.filled) / lim_.chunk;
        const bool head = can_ramp && first && st_.ramp && q.region == Region::movie;
        if (q.direct && !head && post_direct(q, b)) continue;
        if (!post_demand(q.region, b, can_ramp && first ? q.offset + q.filled : kNoHead)) return;
        if (st_.ramp_slot >= 0) return;  // a head goes alone
      }
    }
    // 3. Then a block announced by prefetch(), as a request's would be (with its head after a start).
    if (st_.prefetch != kNoHead && region(Region::movie).length > st_.prefetch) {
      const std::uint64_t b = st_.prefetch / lim_.chunk;
      if (!cache_.cached_or_coming(block_key(Region::movie, b)) && !post_demand(Region::movie, b, can_ramp ? st_.prefetch : kNoHead))
        return;
      st_.prefetch = kNoHead;
    }
    // 4. A head nobody has read yet holds read-ahead back: the reader may still seek elsewhere.
    if (st_.ramp_slot >= 0) return;
    // 5. Then read-ahead of the movie, from where the reader is; none while registered buffers
    // wait (the reader's own read-ahead).
    if (!st_.readahead_enabled || st_.readahead == 0) return;
    if (lim_.direct_min > 0 && requests_.direct_movie_waiting()) return;
    unsigned readahead_in_flight = cache_.readahead_in_flight();
    const std::uint64_t blocks = (region(Region::movie).length + lim_.chunk - 1) / lim_.chunk;
    const std::uint64_t until = st_.readahead_until == ~std::uint64_t{0} ? blocks : (st_.readahead_until + lim_.chunk - 1) / lim_.chunk;
    const std::uint64_t end = std::min({blocks, until, (st_.readahead_from + st_.readahead) / lim_.chunk + 1});
    for (std::uint64_t b = st_.readahead_from / lim_.chunk; b < end; ++b) {
      if (cache_.cached_or_coming(block_key(Region::movie, b))) continue;
      if (in_flight_ >= lim_.depth || readahead_in_flight >= lim_.readahead_depth || !post(Region::movie, b, false, kNoHead)) return;
      ++readahead_in_flight;
    }
  }

  PlannerState& st_;
  BlockCache& cache_;
  const RequestQueue& requests_;
  const Regions& regions_;
  const PlannerLimits& lim_;
  unsigned in_flight_;
  std::vector<FetchOrder> orders_;
};

}  // namespace

std::vector<FetchOrder> plan_reads(PlannerState& state, BlockCache& cache, const RequestQueue& requests, const Regions& regions,
                                   const PlannerLimits& limits, unsigned in_flight) {
  return Planning(state, cache, requests, regions, limits, in_flight).run();
}

}  // namespace vod::client::engine
