// SPDX-License-Identifier: LGPL-2.1-or-later
#include "engine/request_queue.hpp"

#include <algorithm>
#include <cstring>

namespace vod::client::engine {

std::uint64_t RequestQueue::submit(Region r, std::uint64_t offset, std::span<std::uint8_t> dest, Callback done, bool direct) {
  const std::uint64_t id = next_id_++;
  requests_.push_back({id, r, offset, dest, 0, std::move(done), false, direct, false, {}});
  return id;
}

Request* RequestQueue::find(std::uint64_t id) noexcept {
  for (Request& q : requests_)
    if (q.id == id) return &q;
  return nullptr;
}

void RequestQueue::cancel(std::uint64_t id) noexcept {
  std::erase_if(requests_, [id](const Request& q) { return q.id == id; });
}

bool RequestQueue::needs(std::uint64_t key, std::size_t chunk) const noexcept {
  for (const Request& q : requests_) {
    if (q.dest.empty()) continue;
    const std::uint64_t first = (q.offset + q.filled) / chunk, last = (q.offset + q.dest.size() - 1) / chunk;
    if (key >= block_key(q.region, first) && key <= block_key(q.region, last)) return true;
  }
  return false;
}

bool RequestQueue::wants_movie() const noexcept {
  return std::any_of(requests_.begin(), requests_.end(), [](const Request& q) { return q.region == Region::movie && !q.dest.empty(); });
}

bool RequestQueue::direct_movie_waiting() const noexcept {
  return std::any_of(requests_.begin(), requests_.end(),
                     [](const Request& q) { return q.direct && q.region == Region::movie && q.filled < q.dest.size(); });
}

std::uint64_t RequestQueue::mark_waiting() noexcept {
  std::uint64_t newly = 0;
  for (Request& q : requests_)
    if (!q.waited) {
      q.waited = true;
      ++newly;
    }
  return newly;
}

RequestQueue::Finished RequestQueue::serve(BlockCache& cache, const std::uint8_t* ring, std::size_t chunk, std::uint64_t& delivered,
                                           std::uint64_t& copied) {
  Finished finished;
  for (auto it = requests_.begin(); it != requests_.end();) {
    Request& q = *it;
    while (!q.fenced && q.filled < q.dest.size()) {
      const std::uint64_t at = q.offset + q.filled;
      // A direct part covering `at`: its bytes are in place once it has landed, and until then
      // nothing is copied over them (a stale one may still be writing there).
      if (const DirectPart* part = q.part_at(at)) {
        if (part->state != DirectPart::State::landed || part->from != at) break;
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(part->to - at, q.dest.size() - q.filled));
        q.filled += n;
        delivered += n;
        std::erase_if(q.parts, [at](const DirectPart& p) { return p.from == at; });
        continue;
      }
      const std::uint64_t block = at / chunk;
      const auto s = cache.find(block_key(q.region, block));
      if (!s) break;
      Slot& slot = cache.slot(*s);
      const std::uint64_t within = at - block * chunk;
      // A whole block, or the landed head of one still in flight when `at` lies in it.
      std::uint64_t valid_to = slot.length;
      if (slot.state != SlotState::ready) {
        if (slot.state != SlotState::in_flight || !slot.head_ready || within < slot.head_from || within >= slot.head_to) break;
        valid_to = slot.head_to;
      }
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(valid_to - within, q.dest.size() - q.filled));
      // Never over a direct part further on in the same block: it lands there itself.
      for (const DirectPart& p : q.parts)
        if (p.from > at && p.from < at + n) n = static_cast<std::size_t>(p.from - at);
      std::memcpy(q.dest.data() + q.filled, ring + *s * chunk + within, n);
      q.filled += n;
      slot.head_used = true;
      cache.touch(*s);
      delivered += n;
      copied += n;
    }
    if (q.filled == q.dest.size()) {
      finished.emplace_back(std::move(q.done), q.filled);
      it = requests_.erase(it);
    } else {
      ++it;
    }
  }
  return finished;
}

}  // namespace vod::client::engine
