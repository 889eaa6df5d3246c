// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's driver: each progress() reaps what landed, serves the requests, asks the
// planner what to fetch, fetches it and flushes, and sleeps on the fetcher's fds when nothing
// happened; a Read that never completes means the connection is dead. The decisions are the
// planner's (engine/read_planner.hpp), the slots the cache's (engine/block_cache.hpp), the
// requests the queue's (engine/request_queue.hpp).
#include "vod/client/read_engine.hpp"

#include "engine/read_engine_impl.hpp"
#include "rdma/rdma_fetcher.hpp"
#include "vod/client/buffer_pool.hpp"
#include "vod/client/errors.hpp"
#include "vod/rdma/startup_trace.hpp"

namespace vod::client {

namespace trace = rdma::startup_trace;
using driver::kFirstRegisteredSlots;
using driver::kStuckRead;
using namespace engine;  // the engine's parts (engine/*.hpp) by their own names, in its two halves

void ReadEngine::Impl::attach(std::unique_ptr<Fetcher> f) {
  if (chunk > f->max_fetch())
    throw ClientError(ErrorKind::usage, "chunk size " + std::to_string(chunk) + " exceeds the " + std::to_string(f->max_fetch()) +
                                            "-byte largest fetch this connection allows; choose a smaller chunk");
  detach();
  release_pins();  // the caller closed the old connection before it made this one
  depth = std::clamp<unsigned>(f->depth(), 1u, std::min<unsigned>(wanted_depth, static_cast<unsigned>(cache.size())));
  f->on_done([this](std::uint32_t slot, bool ok, const std::string& why) { on_done(slot, ok, why); });
  if (pool) f->use_pool(pool);
  fetcher = std::move(f);
  failure.clear();
  last_progress = Clock::now();
  heartbeat = {};  // another connection, perhaps another server
  hung_logged = false;
  next_probe = last_progress + (liveness ? liveness->probe_every : std::chrono::milliseconds(0));
}

void ReadEngine::Impl::detach() noexcept {
  fetcher.reset();  // its completions still queued anywhere are dropped from now on
  cache.drop_all();
  // The QP may still be alive here (its owner destroys it next), and the MRs over the readers'
  // buffers with it: a Read in flight can still land. Its buffer stays pinned until release_pins(),
  // called once the connection is gone. Parts that landed are kept only if the next connection's
  // descriptors turn out the same (set_region drops them).
  for (DirectFetch& d : direct)
    if (d.used) {
      orphaned_pins.emplace_back(std::move(d.pinned_in), d.dest);
      d = {};
    }
  for (Request& q : requests.requests()) std::erase_if(q.parts, [](const DirectPart& p) { return p.state != DirectPart::State::landed; });
  in_flight = 0;
  probe_in_flight = false;
  planner.ramp = true;
  planner.ramp_slot = -1;
}

void ReadEngine::Impl::invalidate(int keep) noexcept {
  planner.ramp = true;  // a seek, a switch or a new connection: the next request starts small
  const bool keep_ramp = keep >= 0 && keep == planner.ramp_slot;
  planner.ramp_slot = -1;
  planner.prefetch = kNoHead;
  const bool recall = fetcher && fetcher->can_recall();
  if (recall && probe_in_flight) {  // a UDP seek moves to a new epoch: the server drops the old one's ranges
    fetcher->forget(driver::kProbeId);
    probe_in_flight = false;
  }
  cache.invalidate(keep, recall, [this](std::size_t s) {
    fetcher->forget(static_cast<std::uint32_t>(s));
    if (in_flight) --in_flight;
    ++stats.stale_discarded;
  });
  if (keep >= 0) {
    if (keep_ramp) planner.ramp_slot = keep;
    planner.ramp = false;
  }
}

void ReadEngine::Impl::set_region(Region r, const proto::RegionDescriptor& d) {
  auto& current = regions[static_cast<std::size_t>(r)];
  if (current == d) return;
  current = d;
  if (r == Region::movie) mark_direct_stale();
  invalidate();
}

void ReadEngine::Impl::restart_at(std::uint64_t offset) {
  // The block at the new position stays, cached or coming: it holds the same bytes of the same
  // movie. So a seek to where the reader already is (a player's first seek to 0 right after the
  // open prefetched it) costs nothing.
  const auto found = cache.find(block_key(Region::movie, offset / chunk));
  int keep = found ? static_cast<int>(*found) : -1;
  // A fetcher that recalls (UDP) forgets what is in flight at a seek: only a cached block stays.
  if (keep >= 0 && fetcher && fetcher->can_recall() && cache.slot(static_cast<std::size_t>(keep)).state != SlotState::ready) keep = -1;
  const std::uint64_t prefetch = planner.prefetch != kNoHead && planner.prefetch / chunk == offset / chunk ? planner.prefetch : kNoHead;
  invalidate(keep);
  planner.readahead_from = offset;
  planner.prefetch = prefetch;
}

std::uint64_t ReadEngine::Impl::submit(Region r, std::uint64_t offset, std::span<std::uint8_t> dest, Callback done) {
  const std::uint64_t len = regions[static_cast<std::size_t>(r)].length;
  const std::uint64_t n = offset >= len ? 0 : std::min<std::uint64_t>(dest.size(), len - offset);
  // Into registered memory: blocks may land straight in it, and the read-ahead goes on after it.
  const bool registered = r == Region::movie && n > 0 && pool && pool->holds(dest.data(), static_cast<std::size_t>(n));
  const std::uint64_t id = requests.submit(r, offset, dest.first(static_cast<std::size_t>(n)), std::move(done), registered);
  if (r == Region::movie) planner.readahead_from = registered ? offset + n : offset;
  return id;
}

void ReadEngine::Impl::post_wanted() {
  if (!fetcher) return;
  const PlannerLimits limits{depth, readahead_depth, chunk, first_read, fetcher->fetches_in_parts(), direct_min()};
  fence_requests();
  const auto orders = plan_reads(planner, cache, requests, regions, limits, in_flight);
  issue(orders);
  if (liveness) post_probe(Clock::now());
  fetcher->flush();  // what this round chose goes out together
  if (trace::enabled() && !orders.empty())
    trace::mark(std::to_string(orders.size()) + " Read(s) posted, the first a " +
                (orders.front().kind == FetchOrder::Kind::head ? "head" : "block") + " of " + std::to_string(orders.front().length) +
                " bytes (ibv_post_send returned)");
}

void ReadEngine::Impl::issue(const std::vector<FetchOrder>& orders) {
  // A fetch's id says what it is (FetchId): a block, a head or the part before a head, by slot.
  const auto now = Clock::now();
  for (const FetchOrder& o : orders) {
    if (o.kind == FetchOrder::Kind::direct) {
      issue_direct(o, now);
      continue;
    }
    Slot& slot = cache.slot(o.slot);
    const std::uint64_t block_at = block_of(slot.key) * chunk;
    std::uint8_t* dest = ring.get() + o.slot * chunk + (o.offset - block_at);
    const FetchId::Kind kind = o.kind == FetchOrder::Kind::head          ? FetchId::Kind::head
                               : o.kind == FetchOrder::Kind::before_head ? FetchId::Kind::before_head
                                                                         : FetchId::Kind::block;
    fetcher->fetch(FetchId{kind, static_cast<std::uint32_t>(o.slot)}.pack(), o.region, regions[static_cast<std::size_t>(o.region)],
                   o.offset, o.length, dest);
    slot.posted = now;
    ++stats.reads_posted;
    // The stuck-Read clock starts with the first Read after an idle spell, not at the last
    // completion before it: a session left idle (a title's other rendition, a paused reader) and
    // then read again was once taken for a dead connection at its first Read.
    if (in_flight++ == 0) last_progress = now;
    if (o.kind == FetchOrder::Kind::head) ++stats.head_reads;
  }
}

void ReadEngine::Impl::landed(Slot& slot, std::uint32_t bytes) {
  ++stats.reads_completed;
  stats.bytes_read += bytes;
  const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(last_progress - slot.posted);
  stats.read_latency_us.record(static_cast<std::uint64_t>(latency.count()));
  smoothed_latency = smoothed_latency.count() == 0 ? latency : (smoothed_latency * 7 + latency) / 8;
}

void ReadEngine::Impl::on_done(std::uint32_t id, bool ok, const std::string& why) {
  if (id == driver::kProbeId) return on_probe_done(ok, why);
  const FetchId fid = FetchId::unpack(id);
  if (fid.kind == FetchId::Kind::direct) return on_direct_done(fid.index, ok, why);
  if (fid.index >= cache.size()) return;
  if (fid.kind == FetchId::Kind::head) return on_head_done(fid.index, ok, why);
  const std::size_t s = fid.index;  // a block's Read, or the part before its head
  Slot& slot = cache.slot(s);
  if (slot.state != SlotState::in_flight || slot.parts == 0) return;
  last_progress = Clock::now();
  if (in_flight) --in_flight;
  --slot.parts;
  if (!ok) {
    if (failure.empty() && !fetcher->outside_window()) failure = why;  // bytes a window no longer holds lose no connection
    if (slot.parts == 0) cache.drop(s);
    return;
  }
  if (slot.parts > 0) return;  // the other part of the block is still coming
  if (slot.epoch != cache.epoch()) {
    ++stats.stale_discarded;  // from before a seek or switch: never delivered
    slot.state = SlotState::free;
    return;
  }
  slot.state = SlotState::ready;
  landed(slot, slot.length - (slot.head_to - slot.head_from));
}

void ReadEngine::Impl::on_head_done(std::uint32_t s, bool ok, const std::string& why) {
  Slot& slot = cache.slot(s);
  if (slot.state != SlotState::in_flight || !slot.head_in_flight) return;
  last_progress = Clock::now();
  if (in_flight) --in_flight;
  slot.head_in_flight = false;
  if (!ok) {
    if (failure.empty() && !fetcher->outside_window()) failure = why;
    if (static_cast<int>(s) == planner.ramp_slot) planner.ramp_slot = -1;
    cache.drop(s);
    return;
  }
  if (slot.epoch != cache.epoch()) {  // a seek came first: nothing else of this block was posted
    ++stats.stale_discarded;
    slot.state = SlotState::free;
    return;
  }
  slot.head_ready = true;
  landed(slot, slot.head_to - slot.head_from);
  trace::mark("head landed (its completion reaped)");
}

void ReadEngine::Impl::reap() {
  fetcher->poll();
  if (!failure.empty()) throw ConnectionLost(std::exchange(failure, {}));
}

bool ReadEngine::Impl::serve_requests() {
  fence_requests();
  auto finished = requests.serve(cache, ring.get(), chunk, stats.bytes_delivered, stats.bytes_copied);
  if (!finished.empty()) trace::finish("first request served");
  for (auto& [done, n] : finished)
    if (done) done(n);
  return !finished.empty();
}

void ReadEngine::Impl::progress(std::chrono::milliseconds wait) {
  if (interrupter && interrupter->raised()) throw Interrupted();
  if (!fetcher) throw ConnectionLost("not connected");
  const auto deadline = Clock::now() + wait;
  for (;;) {
    // What landed is delivered before anything new is posted (see the header). The CM channel (a
    // system call) is looked at only on the way out, or by the sleep below: neither a start's
    // first bytes nor a seek's head Read waits for it, and a disconnect throws after what had
    // landed was delivered.
    reap();
    if (liveness) check_alive(Clock::now());
    const bool from_head = planner.ramp_slot >= 0;  // a head landed or is coming; the rest of its block is not asked for yet
    const bool served = serve_requests();
    // Served from a head: the rest of its block and the read-ahead go on the next call (header).
    if (served && from_head && !posts_deferred) {
      posts_deferred = true;
      return check_disconnect();
    }
    posts_deferred = false;
    const std::uint64_t posted = stats.reads_posted;
    post_wanted();
    if (served) return check_disconnect();
    if (stats.reads_posted != posted) continue;  // they may have completed already: look before sleeping
    const auto now = Clock::now();
    // Before the deadline's return: progress(0) at next_deadline() finds a stuck Read too.
    if (!liveness && in_flight > 0 && now - last_progress > kStuckRead)
      throw ConnectionLost(std::string("no ") + fetcher->fetch_name() + " completed for " + std::to_string(kStuckRead.count()) + " s (" +
                           std::to_string(in_flight) + " requested, none arrived)");
    if (in_flight == 0 && !probe_in_flight) last_progress = now;
    if (now >= deadline) return check_disconnect();
    stats.stalls += requests.mark_waiting();
    trace::mark("nothing landed yet: waiting on the channels");
    // Sleep on the completion channel and the CM channel, even when idle: a paced reader waits
    // here, and a disconnect must still be noticed. Watching a server, no longer than its next
    // probe or its dead deadline.
    auto wake = deadline;
    if (const auto next = next_deadline(); next && liveness) wake = std::min(wake, *next);
    wait_for_events(*fetcher, interrupter,
                    std::chrono::duration_cast<std::chrono::milliseconds>(std::max(wake, now) - now) + std::chrono::milliseconds(1));
  }
}

// ---------------------------------------------------------------- the public face

ReadEngine::ReadEngine(const EngineOptions& options) : impl_(std::make_unique<Impl>(options)) {}
ReadEngine::~ReadEngine() {
  impl_->detach();
  impl_->release_pins();  // the owner destroys the connection before its engine (session.hpp)
}

void ReadEngine::attach(std::unique_ptr<Fetcher> fetcher) { impl_->attach(std::move(fetcher)); }
void ReadEngine::attach(rdma::ClientEndpoint& ep, unsigned depth, std::size_t max_read, ibv_mr* ring_mr) {
  if (impl_->chunk > max_read)
    throw ClientError(ErrorKind::usage, "chunk size " + std::to_string(impl_->chunk) + " exceeds the " + std::to_string(max_read) +
                                            "-byte largest RDMA Read this connection allows; choose a smaller chunk");
  impl_->attach(std::make_unique<RdmaFetcher>(ep, impl_->ring.get(), impl_->ring_size + driver::kProbeBytes, ring_mr, depth, max_read));
}
ibv_mr* ReadEngine::register_ring(rdma::ClientEndpoint& ep) const {
  // The ring's first piece: the slots an open's first Reads land in (the head and the rest of its
  // block, the catalog, the index, the first read-ahead). The RdmaFetcher registers each further
  // piece of as many slots when it first fetches into it. A fresh ring's pages are faulted in and
  // zeroed as they are registered, 24-48 ms for the whole 8.5 MiB in the Soft-RoCE guest, which an
  // open's first bytes would otherwise wait for.
  const std::size_t first = std::min(impl_->ring_size, kFirstRegisteredSlots * impl_->chunk);
  return RdmaFetcher::register_ring(ep, impl_->ring.get(), first);
}
void ReadEngine::detach() noexcept { impl_->detach(); }
void ReadEngine::release_pins() noexcept { impl_->release_pins(); }
void ReadEngine::use_pool(std::shared_ptr<BufferPool> pool) { impl_->use_pool(std::move(pool)); }
bool ReadEngine::direct_active() const noexcept { return impl_->direct_min() > 0; }
std::size_t ReadEngine::direct_in_flight() const noexcept {
  return static_cast<std::size_t>(std::count_if(impl_->direct.begin(), impl_->direct.end(), [](const auto& d) { return d.used; }));
}
bool ReadEngine::attached() const noexcept { return impl_->fetcher != nullptr; }
std::uint8_t* ReadEngine::ring() const noexcept { return impl_->ring.get(); }
std::string ReadEngine::transport_summary() const { return impl_->fetcher ? impl_->fetcher->summary() : std::string(); }
void ReadEngine::select_movie(std::uint64_t name_hash, std::uint32_t generation) noexcept {
  if (impl_->fetcher) impl_->fetcher->select_movie(name_hash, generation);
}
Fetcher* ReadEngine::fetcher() const noexcept { return impl_->fetcher.get(); }

void ReadEngine::set_region(Region r, const proto::RegionDescriptor& d) { impl_->set_region(r, d); }
const proto::RegionDescriptor& ReadEngine::region(Region r) const noexcept { return impl_->regions[static_cast<std::size_t>(r)]; }
void ReadEngine::prefetch(std::uint64_t offset) noexcept {
  impl_->planner.prefetch = offset;
  impl_->planner.readahead_from = offset;
}
void ReadEngine::restart_at(std::uint64_t offset) { impl_->restart_at(offset); }
void ReadEngine::set_readahead(bool enabled) noexcept { impl_->planner.readahead_enabled = enabled; }
void ReadEngine::set_readahead_window(std::size_t bytes) noexcept { impl_->planner.readahead = std::min(bytes, impl_->readahead_max); }
std::size_t ReadEngine::readahead_window() const noexcept { return impl_->planner.readahead; }
void ReadEngine::set_readahead_limit(std::uint64_t end) noexcept { impl_->planner.readahead_until = end; }
void ReadEngine::watch_server(std::optional<ServerWatch> watch) {
  if (!watch) {
    impl_->liveness.reset();
    return;
  }
  impl_->liveness = engine::LivenessPolicy{watch->probe_every, watch->hung_after, watch->dead_after};
  impl_->next_probe = Impl::Clock::now() + watch->probe_every;
}

std::uint64_t ReadEngine::submit(Region r, std::uint64_t offset, std::span<std::uint8_t> dest, Callback done) {
  return impl_->submit(r, offset, dest, std::move(done));
}
void ReadEngine::cancel(std::uint64_t id) noexcept { impl_->requests.cancel(id); }
std::size_t ReadEngine::pending() const noexcept { return impl_->requests.size(); }
bool ReadEngine::has_block(Region r, std::uint64_t offset) const noexcept {
  return impl_->cache.cached_or_coming(block_key(r, offset / impl_->chunk));
}

void ReadEngine::progress(std::chrono::milliseconds wait) { impl_->progress(wait); }
void ReadEngine::post_wanted() { impl_->post_wanted(); }

std::size_t ReadEngine::read(Region r, std::uint64_t offset, std::span<std::uint8_t> dest) {
  bool done = false;
  std::size_t got = 0;
  const std::uint64_t id = submit(r, offset, dest, [&](std::size_t n) {
    done = true;
    got = n;
  });
  try {
    while (!done) progress(std::chrono::milliseconds(1000));
  } catch (...) {
    cancel(id);  // the callback refers to this frame
    throw;
  }
  return got;
}

int ReadEngine::wait_fd() const noexcept {
  if (!impl_->fetcher) return -1;
  const auto fds = impl_->fetcher->wait_fds();
  return fds.empty() ? -1 : fds.front();
}
void ReadEngine::arm() {
  if (impl_->fetcher && !impl_->fetcher->armed()) impl_->fetcher->arm();
}
void ReadEngine::consume() noexcept {
  if (impl_->fetcher) impl_->fetcher->consume();
}
int ReadEngine::cm_fd() const noexcept { return impl_->fetcher ? impl_->fetcher->control_fd() : -1; }
std::vector<int> ReadEngine::wait_fds() const {
  std::vector<int> fds;
  if (!impl_->fetcher) return fds;
  fds = impl_->fetcher->wait_fds();
  if (const int fd = impl_->fetcher->control_fd(); fd >= 0) fds.push_back(fd);
  return fds;
}
std::optional<ReadEngine::Clock::time_point> ReadEngine::next_deadline() const { return impl_->next_deadline(); }
void ReadEngine::set_interrupter(const Interrupter* i) noexcept { impl_->interrupter = i; }
Stats ReadEngine::stats() const { return impl_->snapshot(); }
std::size_t ReadEngine::chunk_size() const noexcept { return impl_->chunk; }
std::size_t ReadEngine::ring_bytes() const noexcept { return impl_->ring_size + driver::kProbeBytes; }

}  // namespace vod::client
