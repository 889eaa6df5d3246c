// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/read_engine.hpp"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "vod/client/errors.hpp"
#include "rdma/rdma_fetcher.hpp"

namespace vod::client {

namespace {
constexpr std::size_t kMinChunk = 8 * 1024;
constexpr std::size_t kPage = 4096;
// A Read that has not completed in this long means the connection is dead even if no event said so.
constexpr std::chrono::seconds kStuckRead{15};
}  // namespace

namespace {
std::size_t chunk_of(const EngineOptions& o) noexcept { return (std::max(o.chunk_size, kMinChunk) + kPage - 1) / kPage * kPage; }
std::size_t slots_of(const EngineOptions& o) noexcept {
  const std::size_t chunk = chunk_of(o);
  return std::max(o.read_depth, 1u) + (o.readahead_bytes + chunk - 1) / chunk + 2;
}
}  // namespace

std::size_t ring_bytes_for(const EngineOptions& o) noexcept { return slots_of(o) * chunk_of(o); }

std::optional<EngineOptions> fit_rings(const EngineOptions& o, std::size_t sessions, std::uint64_t budget) noexcept {
  const auto fits = [&](const EngineOptions& e) { return std::uint64_t{ring_bytes_for(e)} * std::max<std::size_t>(sessions, 1) <= budget; };
  if (fits(o)) return o;
  EngineOptions e = o;
  const std::size_t chunk = chunk_of(o);
  // Halving the read-ahead, then the depth: each step keeps as much of what was asked as fits.
  while (e.readahead_bytes > chunk) {
    e.readahead_bytes = std::max(chunk, e.readahead_bytes / 2);
    if (fits(e)) return e;
  }
  while (e.read_depth > 2) {
    e.read_depth = std::max(2u, e.read_depth / 2);
    e.readahead_depth = std::min(e.readahead_depth, e.read_depth);
    if (fits(e)) return e;
  }
  return std::nullopt;
}

ReadEngine::ReadEngine(const EngineOptions& o)
    : chunk_(chunk_of(o)),
      readahead_(o.readahead_bytes),
      readahead_max_(o.readahead_bytes),
      wanted_depth_(std::max(o.read_depth, 1u)),
      readahead_depth_(std::max(o.readahead_depth, 1u)),
      first_read_(o.first_read_bytes == 0 ? 0 : std::min((o.first_read_bytes + kPage - 1) / kPage * kPage, chunk_ / 2)) {
  const std::size_t slots = slots_of(o);
  ring_size_ = slots * chunk_;
  ring_ = take_ring(ring_size_);  // resident already when a closed session left it spare
  slots_.resize(slots);
}

ReadEngine::~ReadEngine() { detach(); }

void ReadEngine::attach(std::unique_ptr<Fetcher> fetcher) {
  if (chunk_ > fetcher->max_fetch())
    throw ClientError(ErrorKind::usage, "chunk size " + std::to_string(chunk_) + " exceeds the " + std::to_string(fetcher->max_fetch()) +
                                            "-byte largest fetch this connection allows; choose a smaller chunk");
  detach();
  depth_ = std::clamp<unsigned>(fetcher->depth(), 1u, std::min<unsigned>(wanted_depth_, static_cast<unsigned>(slots_.size())));
  fetcher->on_done([this](std::uint32_t slot, bool ok, const std::string& failure) { on_done(slot, ok, failure); });
  fetcher_ = std::move(fetcher);
  failure_.clear();
  last_progress_ = std::chrono::steady_clock::now();
}

ibv_mr* ReadEngine::register_ring(rdma::ClientEndpoint& ep) const { return RdmaFetcher::register_ring(ep, ring_.get(), ring_size_); }

void ReadEngine::attach(rdma::ClientEndpoint& ep, unsigned depth, std::size_t max_read, ibv_mr* ring_mr) {
  if (chunk_ > max_read)
    throw ClientError(ErrorKind::usage, "chunk size " + std::to_string(chunk_) + " exceeds the " + std::to_string(max_read) +
                                            "-byte largest RDMA Read this connection allows; choose a smaller chunk");
  attach(std::make_unique<RdmaFetcher>(ep, ring_.get(), ring_size_, ring_mr, depth, max_read));
}

void ReadEngine::detach() noexcept {
  fetcher_.reset();  // its completions still queued anywhere are dropped from now on
  drop_all_slots();
}

int ReadEngine::wait_fd() const noexcept {
  if (!fetcher_) return -1;
  const auto fds = fetcher_->wait_fds();
  return fds.empty() ? -1 : fds.front();
}
int ReadEngine::cm_fd() const noexcept { return fetcher_ ? fetcher_->control_fd() : -1; }

std::uint64_t ReadEngine::blocks_in(Region r) const noexcept {
  const std::uint64_t len = regions_[static_cast<int>(r)].length;
  return (len + chunk_ - 1) / chunk_;
}

void ReadEngine::drop_slot(std::size_t s) noexcept {
  Slot& slot = slots_[s];
  auto it = block_slot_.find(slot.key);
  if (it != block_slot_.end() && it->second == s) block_slot_.erase(it);
  slot.state = SlotState::free;
}

void ReadEngine::drop_all_slots() noexcept {
  for (auto& slot : slots_) slot.state = SlotState::free;
  block_slot_.clear();
  stats_.in_flight = 0;
  ++epoch_;
  ramp_ = true;
  ramp_slot_ = -1;
}

void ReadEngine::invalidate(int keep) noexcept {
  ++epoch_;
  ramp_ = true;  // a seek, a switch or a new connection: the next request starts small
  const bool keep_ramp = keep >= 0 && keep == ramp_slot_;
  ramp_slot_ = -1;
  prefetch_ = kNoHead;
  const bool recall = fetcher_ && fetcher_->can_recall();
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (static_cast<int>(s) == keep) {
      slots_[s].epoch = epoch_;
      if (keep_ramp) ramp_slot_ = keep;
      ramp_ = false;
    } else if (slots_[s].state == SlotState::ready) {
      drop_slot(s);
    } else if (slots_[s].state == SlotState::in_flight) {
      if (recall) {  // nothing more lands in it: free at once
        fetcher_->forget(static_cast<std::uint32_t>(s));
        drop_slot(s);
        if (stats_.in_flight) --stats_.in_flight;
        ++stats_.stale_discarded;
      } else if (slots_[s].parts == 0 && !slots_[s].head_in_flight) {
        drop_slot(s);  // a landed head whose rest was never posted: nothing more comes into it
      } else {
        block_slot_.erase(slots_[s].key);  // lands, then is discarded
      }
    }
  }
}

void ReadEngine::set_region(Region r, const proto::RegionDescriptor& d) {
  if (regions_[static_cast<int>(r)] == d) return;
  regions_[static_cast<int>(r)] = d;
  invalidate();
}

void ReadEngine::prefetch(std::uint64_t offset) noexcept {
  prefetch_ = offset;
  readahead_from_ = offset;
}

void ReadEngine::restart_at(std::uint64_t offset) {
  // The block at the new position stays, cached or coming: it holds the same bytes of the same
  // movie. So a seek to where the reader already is (a player's first seek to 0 right after the
  // open prefetched it) costs nothing.
  const std::uint64_t k = key(Region::movie, offset / chunk_);
  const auto found = block_slot_.find(k);
  int keep = found == block_slot_.end() ? -1 : static_cast<int>(found->second);
  // A fetcher that recalls (UDP) forgets what is in flight at a seek: only a cached block stays.
  if (keep >= 0 && fetcher_ && fetcher_->can_recall() && slots_[static_cast<std::size_t>(keep)].state != SlotState::ready) keep = -1;
  const std::uint64_t pending_prefetch = prefetch_ != kNoHead && prefetch_ / chunk_ == offset / chunk_ ? prefetch_ : kNoHead;
  invalidate(keep);
  readahead_from_ = offset;
  prefetch_ = pending_prefetch;
}

std::uint64_t ReadEngine::submit(Region r, std::uint64_t offset, std::span<std::uint8_t> dest, Callback done) {
  const std::uint64_t len = regions_[static_cast<int>(r)].length;
  const std::uint64_t n = offset >= len ? 0 : std::min<std::uint64_t>(dest.size(), len - offset);
  const std::uint64_t id = next_request_id_++;
  requests_.push_back({id, r, offset, dest.first(static_cast<std::size_t>(n)), 0, std::move(done), false});
  if (r == Region::movie) readahead_from_ = offset;
  return id;
}

void ReadEngine::cancel(std::uint64_t id) noexcept {
  std::erase_if(requests_, [id](const Request& q) { return q.id == id; });
}

bool ReadEngine::needed_by_request(std::uint64_t k) const noexcept {
  for (const Request& q : requests_) {
    if (q.dest.empty()) continue;
    const std::uint64_t first = (q.offset + q.filled) / chunk_, last = (q.offset + q.dest.size() - 1) / chunk_;
    if (k >= key(q.region, first) && k <= key(q.region, last)) return true;
  }
  return false;
}

bool ReadEngine::in_readahead_window(std::uint64_t k) const noexcept {
  const std::uint64_t first = readahead_from_ / chunk_;
  const std::uint64_t last = (readahead_from_ + readahead_) / chunk_;
  return k >= key(Region::movie, first) && k <= key(Region::movie, last);
}

int ReadEngine::take_slot(bool for_request) {
  int best = -1;
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    const Slot& slot = slots_[s];
    if (slot.state == SlotState::free) return static_cast<int>(s);
    if (slot.state != SlotState::ready || needed_by_request(slot.key)) continue;
    if (!for_request && in_readahead_window(slot.key)) continue;  // read-ahead never evicts read-ahead
    if (best < 0 || slot.last_use < slots_[static_cast<std::size_t>(best)].last_use) best = static_cast<int>(s);
  }
  if (best >= 0) drop_slot(static_cast<std::size_t>(best));
  return best;
}

bool ReadEngine::post(Region r, std::uint64_t block, bool for_request, std::uint64_t head_at) {
  const int s = take_slot(for_request);
  if (s < 0) return false;
  const proto::RegionDescriptor& d = regions_[static_cast<int>(r)];
  const std::uint64_t at = block * chunk_;
  const auto length = static_cast<std::uint32_t>(std::min<std::uint64_t>(chunk_, d.length - at));
  Slot& slot = slots_[static_cast<std::size_t>(s)];
  std::uint8_t* dest = ring_.get() + static_cast<std::size_t>(s) * chunk_;
  slot = {};
  slot.state = SlotState::in_flight;
  slot.readahead = !for_request;
  slot.key = key(r, block);
  slot.epoch = epoch_;
  slot.length = length;
  slot.last_use = ++use_clock_;
  slot.posted = std::chrono::steady_clock::now();
  if (head_at != kNoHead) {
    // Only the head now: page-aligned within the block, first_read_ bytes (less at the block's
    // end). post_rest() fetches the rest once a reader has come for it.
    const auto from = static_cast<std::uint32_t>((head_at - at) / kPage * kPage);
    const auto to = static_cast<std::uint32_t>(std::min<std::uint64_t>(from + first_read_, length));
    fetcher_->fetch(static_cast<std::uint32_t>(slots_.size() + static_cast<std::size_t>(s)), r, d, at + from, to - from, dest + from);
    slot.head_from = from;
    slot.head_to = to;
    slot.head_in_flight = true;
    ramp_slot_ = s;
    ++stats_.head_reads;
  } else {
    fetcher_->fetch(static_cast<std::uint32_t>(s), r, d, at, length, dest);
    slot.parts = 1;
  }
  block_slot_[slot.key] = static_cast<std::size_t>(s);
  ++stats_.reads_posted;
  ++stats_.in_flight;
  return true;
}

bool ReadEngine::post_rest(std::size_t s) {
  Slot& slot = slots_[s];
  const unsigned parts = (slot.head_to < slot.length ? 1u : 0u) + (slot.head_from > 0 ? 1u : 0u);
  if (stats_.in_flight + parts > depth_) return false;
  const std::uint64_t block = block_of(slot.key);
  const Region r = region_of(slot.key);
  const proto::RegionDescriptor& d = regions_[static_cast<int>(r)];
  std::uint8_t* dest = ring_.get() + s * chunk_;
  const std::uint64_t at = block * chunk_;
  if (slot.head_to < slot.length)  // after the head: numbered as the slot
    fetcher_->fetch(static_cast<std::uint32_t>(s), r, d, at + slot.head_to, slot.length - slot.head_to, dest + slot.head_to);
  if (slot.head_from > 0)  // before it (a request began mid-block): numbered past the heads
    fetcher_->fetch(static_cast<std::uint32_t>(2 * slots_.size() + s), r, d, at, slot.head_from, dest);
  slot.parts = static_cast<std::uint8_t>(parts);
  slot.posted = std::chrono::steady_clock::now();
  stats_.reads_posted += parts;
  stats_.in_flight += parts;
  if (parts == 0) slot.state = SlotState::ready;  // the head was the whole block
  return true;
}

bool ReadEngine::post_demand(Region r, std::uint64_t block, std::uint64_t head_at) {
  // The first movie block after a start or seek gets a small head Read, alone.
  if (r != Region::movie || !ramp_) head_at = kNoHead;
  if (stats_.in_flight >= depth_ || !post(r, block, true, head_at)) return false;
  if (r == Region::movie) ramp_ = false;
  return true;
}

void ReadEngine::post_wanted() {
  if (!fetcher_) return;
  choose_reads();
  fetcher_->flush();  // what this round chose goes out together
}

void ReadEngine::choose_reads() {
  // The ramp: nothing is posted behind a head in flight; once it has landed, the rest of its block
  // goes out when a reader has taken from it or needs more of the block.
  if (ramp_slot_ >= 0) {
    const auto h = static_cast<std::size_t>(ramp_slot_);
    if (slots_[h].head_in_flight) return;
    if (slots_[h].head_used || needed_by_request(slots_[h].key)) {
      if (!post_rest(h)) return;
      ramp_slot_ = -1;
    } else if (std::any_of(requests_.begin(), requests_.end(), [](const Request& q) { return q.region == Region::movie && !q.dest.empty(); })) {
      drop_slot(h);  // the reader went elsewhere: the unread head holds nothing back any more
      ramp_slot_ = -1;
    }
  }
  // Requests first, oldest first: their blocks in order.
  // Ramp-up needs two Reads in flight: the rest of a block around a head is up to two parts.
  const bool can_ramp = first_read_ > 0 && depth_ >= 2 && fetcher_->fetches_in_parts();
  for (const Request& q : requests_) {
    // A region without a descriptor (the new connection has not described it yet) waits.
    if (q.dest.empty() || regions_[static_cast<int>(q.region)].length <= q.offset + q.filled) continue;
    const std::uint64_t last = (q.offset + q.dest.size() - 1) / chunk_;
    for (std::uint64_t b = (q.offset + q.filled) / chunk_; b <= last; ++b) {
      if (cached_or_coming(key(q.region, b))) continue;
      const bool first = b == (q.offset + q.filled) / chunk_;
      if (!post_demand(q.region, b, can_ramp && first ? q.offset + q.filled : kNoHead)) return;
      if (ramp_slot_ >= 0) return;  // a head goes alone
    }
  }
  // Then a block announced by prefetch(), as a request's would be (with its head after a start).
  if (prefetch_ != kNoHead && regions_[static_cast<int>(Region::movie)].length > prefetch_) {
    const std::uint64_t b = prefetch_ / chunk_;
    if (!cached_or_coming(key(Region::movie, b)) && !post_demand(Region::movie, b, can_ramp ? prefetch_ : kNoHead)) return;
    prefetch_ = kNoHead;
  }
  // A head nobody has read yet holds read-ahead back: the reader may still seek elsewhere.
  if (ramp_slot_ >= 0) return;
  // Then read-ahead of the movie, from where the reader is.
  if (!readahead_enabled_ || readahead_ == 0) return;
  unsigned readahead_in_flight = 0;
  for (const Slot& slot : slots_) readahead_in_flight += slot.state == SlotState::in_flight && slot.readahead;
  const std::uint64_t end = std::min(blocks_in(Region::movie), (readahead_from_ + readahead_) / chunk_ + 1);
  for (std::uint64_t b = readahead_from_ / chunk_; b < end; ++b) {
    if (cached_or_coming(key(Region::movie, b))) continue;
    if (stats_.in_flight >= depth_ || readahead_in_flight >= readahead_depth_ || !post(Region::movie, b, false)) return;
    ++readahead_in_flight;
  }
}

void ReadEngine::on_done(std::uint32_t id, bool ok, const std::string& failure) {
  const std::size_t n = slots_.size();
  if (id >= n && id < 2 * n) return on_head_done(static_cast<std::uint32_t>(id - n), ok, failure);
  const std::size_t s = id < n ? id : id - 2 * n;  // a block's Read, or the part before its head
  if (s >= n || slots_[s].state != SlotState::in_flight || slots_[s].parts == 0) return;
  Slot& slot = slots_[s];
  last_progress_ = std::chrono::steady_clock::now();
  if (stats_.in_flight) --stats_.in_flight;
  --slot.parts;
  if (!ok) {
    if (failure_.empty()) failure_ = failure;
    if (slot.parts == 0) drop_slot(s);
    return;
  }
  if (slot.parts > 0) return;  // the other part of the block is still coming
  if (slot.epoch != epoch_) {
    ++stats_.stale_discarded;  // from before a seek or switch: never delivered
    slot.state = SlotState::free;
    return;
  }
  slot.state = SlotState::ready;
  ++stats_.reads_completed;
  stats_.bytes_read += slot.length - (slot.head_to - slot.head_from);
  stats_.read_latency_us.record(
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(last_progress_ - slot.posted).count()));
}

void ReadEngine::on_head_done(std::uint32_t s, bool ok, const std::string& failure) {
  Slot& slot = slots_[s];
  if (slot.state != SlotState::in_flight || !slot.head_in_flight) return;
  last_progress_ = std::chrono::steady_clock::now();
  if (stats_.in_flight) --stats_.in_flight;
  slot.head_in_flight = false;
  if (!ok) {
    if (failure_.empty()) failure_ = failure;
    if (static_cast<int>(s) == ramp_slot_) ramp_slot_ = -1;
    drop_slot(s);
    return;
  }
  if (slot.epoch != epoch_) {  // a seek came first: nothing else of this block was posted
    ++stats_.stale_discarded;
    slot.state = SlotState::free;
    return;
  }
  slot.head_ready = true;
  ++stats_.reads_completed;
  stats_.bytes_read += slot.head_to - slot.head_from;
  stats_.read_latency_us.record(
      static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(last_progress_ - slot.posted).count()));
}

void ReadEngine::reap() {
  fetcher_->poll();
  if (!failure_.empty()) throw ConnectionLost(std::exchange(failure_, {}));
}

bool ReadEngine::serve_requests() {
  std::vector<std::pair<Callback, std::size_t>> finished;
  for (auto it = requests_.begin(); it != requests_.end();) {
    Request& q = *it;
    while (q.filled < q.dest.size()) {
      const std::uint64_t at = q.offset + q.filled;
      const std::uint64_t block = at / chunk_;
      auto found = block_slot_.find(key(q.region, block));
      if (found == block_slot_.end()) break;
      Slot& slot = slots_[found->second];
      const std::uint64_t within = at - block * chunk_;
      // A whole block, or the landed head of one still in flight when `at` lies in it.
      std::uint64_t valid_to = slot.length;
      if (slot.state != SlotState::ready) {
        if (slot.state != SlotState::in_flight || !slot.head_ready || within < slot.head_from || within >= slot.head_to) break;
        valid_to = slot.head_to;
      }
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(valid_to - within, q.dest.size() - q.filled));
      std::memcpy(q.dest.data() + q.filled, ring_.get() + found->second * chunk_ + within, n);
      q.filled += n;
      slot.head_used = true;
      slot.last_use = ++use_clock_;
      stats_.bytes_delivered += n;
    }
    if (q.filled == q.dest.size()) {
      finished.emplace_back(std::move(q.done), q.filled);
      it = requests_.erase(it);
    } else {
      ++it;
    }
  }
  for (auto& [done, n] : finished)
    if (done) done(n);
  return !finished.empty();
}

void ReadEngine::check_disconnect() {
  if (fetcher_) fetcher_->check_events();
}

void ReadEngine::arm() {
  if (fetcher_ && !fetcher_->armed()) fetcher_->arm();
}

void ReadEngine::consume() noexcept {
  if (fetcher_) fetcher_->consume();
}

bool ReadEngine::wait_for_events(std::chrono::milliseconds wait) {
  if (!fetcher_->armed()) {
    arm();
    return true;  // completions may have arrived before arming: the caller polls again first
  }
  std::vector<pollfd> fds;
  for (int fd : fetcher_->wait_fds()) fds.push_back({fd, POLLIN, 0});
  const std::size_t completion_fds = fds.size();
  fds.push_back({fetcher_->control_fd(), POLLIN, 0});
  fds.push_back({interrupter_ ? interrupter_->fd() : -1, POLLIN, 0});
  int ms = static_cast<int>(wait.count());
  if (const int timer = fetcher_->next_timeout_ms(); timer >= 0) ms = std::min(ms, timer);
  const int n = poll(fds.data(), fds.size(), ms);
  if (interrupter_ && interrupter_->raised()) throw Interrupted();
  if (n <= 0) return false;
  for (std::size_t i = 0; i < completion_fds; ++i)
    if (fds[i].revents & POLLIN) consume();
  if (fds[completion_fds].revents & POLLIN) check_disconnect();
  return true;
}

void ReadEngine::progress(std::chrono::milliseconds wait) {
  if (interrupter_ && interrupter_->raised()) throw Interrupted();
  if (!fetcher_) throw ConnectionLost("not connected");
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    // What landed is delivered before anything new is posted (see the header). The CM channel (a
    // system call) is looked at only on the way out, or by the sleep below: neither a start's
    // first bytes nor a seek's head Read waits for it, and a disconnect throws after what had
    // landed was delivered.
    reap();
    const bool served = serve_requests();
    const std::uint64_t posted = stats_.reads_posted;
    post_wanted();
    if (served) return check_disconnect();
    if (stats_.reads_posted != posted) continue;  // they may have completed already: look before sleeping
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return check_disconnect();
    for (Request& q : requests_)
      if (!q.waited) {
        q.waited = true;
        ++stats_.stalls;
      }
    if (stats_.in_flight > 0 && now - last_progress_ > kStuckRead)
      throw ConnectionLost(std::string("no ") + fetcher_->fetch_name() + " completed for " + std::to_string(kStuckRead.count()) + " s (" +
                           std::to_string(stats_.in_flight) + " requested, none arrived)");
    if (stats_.in_flight == 0) last_progress_ = now;
    // Sleep on the completion channel and the CM channel, even when idle: a paced reader waits
    // here, and a disconnect must still be noticed.
    wait_for_events(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) + std::chrono::milliseconds(1));
  }
}

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

}  // namespace vod::client
