// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's direct transfers (zero copy, read_engine.hpp): a Read straight into a reader's
// registered buffer is numbered past the ring's fetches, pins its buffer in the pool until it
// completes, and lands as a part of its request; a cancelled request's Reads fence their memory,
// and a new descriptor makes those still in flight stale.
#include "engine/read_engine_impl.hpp"

#include "vod/client/buffer_pool.hpp"
#include "vod/log.hpp"

namespace vod::client {

using namespace engine;  // the engine's parts (engine/*.hpp) by their own names, in its two halves

void ReadEngine::Impl::fence_requests() noexcept {
  // A direct Read whose request was cancelled cannot be recalled: a later request into the same
  // memory (the reader reuses its buffer after a seek or a flush) waits until it has landed, so
  // that it neither copies nor fetches anything that the old Read would then overwrite.
  for (Request& q : requests.requests()) q.fenced = false;
  for (const DirectFetch& d : direct) {
    if (!d.used || requests.find(d.request)) continue;
    for (Request& q : requests.requests())
      if (q.dest.data() < d.dest + d.length && d.dest < q.dest.data() + q.dest.size()) q.fenced = true;
  }
}

void ReadEngine::Impl::mark_direct_stale() noexcept {
  // Other bytes now live at the same offsets (a switch), or the same ones elsewhere (a reconnect):
  // what landed straight in a reader's buffer is fetched again, and what is still in flight there
  // is discarded when it completes, nothing served over it before (the planner waits for it).
  for (Request& q : requests.requests()) {
    std::erase_if(q.parts, [](const DirectPart& p) { return p.state == DirectPart::State::landed; });
    for (DirectPart& p : q.parts) p.state = DirectPart::State::stale;
  }
}

void ReadEngine::Impl::issue_direct(const FetchOrder& o, Clock::time_point now) {
  Request* q = requests.find(o.request);
  if (!q) return;  // cannot happen: the planner took it from the queue just now
  std::size_t k = 0;
  while (k < direct.size() && direct[k].used) ++k;
  if (k == direct.size()) direct.emplace_back();
  std::uint8_t* dest = q->dest.data() + (o.offset - q->offset);
  // Pinned until it completes, or the connection is gone: a posted Read cannot be recalled.
  pool->pin(dest);
  try {
    fetcher->fetch(FetchId{FetchId::Kind::direct, static_cast<std::uint32_t>(k)}.pack(), o.region,
                   regions[static_cast<std::size_t>(o.region)], o.offset, o.length, dest);
  } catch (const std::exception& e) {
    // Nothing was posted: registering the pool's memory failed (RLIMIT_MEMLOCK, say). The request
    // is planned again, through the ring, and so is everything after it: slower, never a failure.
    pool->unpin(dest);
    direct_failed = true;
    log::warn("client",
              std::string("cannot read straight into the reader's registered buffers (") + e.what() +
                  "); reading through the ring, copied, from now on (raise RLIMIT_MEMLOCK, or --zero-copy off to skip the attempt)");
    return;
  }
  direct[k] = {true, q->id, o.offset, dest, o.length, now, pool};
  q->parts.push_back({o.offset, o.offset + o.length, DirectPart::State::in_flight});
  ++stats.reads_posted;
  ++stats.direct_reads;
  ++in_flight;
}

void ReadEngine::Impl::on_direct_done(std::size_t k, bool ok, const std::string& why) {
  if (k >= direct.size() || !direct[k].used) return;
  DirectFetch d = std::move(direct[k]);
  direct[k] = {};
  d.pinned_in->unpin(d.dest);
  last_progress = Clock::now();
  if (in_flight) --in_flight;
  Request* q = requests.find(d.request);
  auto part = q ? std::find_if(q->parts.begin(), q->parts.end(), [&](const DirectPart& p) { return p.from == d.from; })
                : decltype(q->parts.begin()){};
  if (!q || part == q->parts.end() || part->state == DirectPart::State::stale) {
    if (q && part != q->parts.end()) q->parts.erase(part);
    ++stats.stale_discarded;  // cancelled, or from before a switch: never delivered
    if (!ok && failure.empty() && !fetcher->outside_window()) failure = why;
    return;
  }
  if (!ok) {
    if (failure.empty() && !fetcher->outside_window()) failure = why;
    q->parts.erase(part);
    return;
  }
  part->state = DirectPart::State::landed;
  ++stats.reads_completed;
  stats.bytes_read += part->to - part->from;
  stats.read_latency_us.record(
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(last_progress - d.posted).count()));
}

void ReadEngine::Impl::release_pins() noexcept {
  for (auto& [p, dest] : orphaned_pins) p->unpin(dest);
  orphaned_pins.clear();
}

}  // namespace vod::client
