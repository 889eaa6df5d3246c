// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's state (ReadEngine::Impl), private to its two halves: the driver
// (read_engine.cpp: attach, seek, plan, fetch, reap, serve, wait) and the direct transfers into
// readers' registered buffers (engine/direct_transfers.cpp: zero copy).
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/block_cache.hpp"
#include "engine/event_wait.hpp"
#include "engine/fetch_id.hpp"
#include "engine/liveness.hpp"
#include "engine/read_planner.hpp"
#include "engine/request_queue.hpp"
#include "engine/ring_sizing.hpp"
#include "rdma/rdma_fetcher.hpp"
#include "vod/client/buffer_pool.hpp"
#include "vod/client/errors.hpp"
#include "vod/client/read_engine.hpp"
#include "vod/client/ring_pool.hpp"
#include "vod/rdma/startup_trace.hpp"

namespace vod::client {

namespace driver {
// A Read that has not completed in this long means the connection is dead even if no event said so.
inline constexpr std::chrono::seconds kStuckRead{15};
inline constexpr std::size_t kFirstRegisteredSlots = 8;  // slots per registered piece of the ring: see register_ring
// After the ring's slots: where the probes of the server's status words land (ReadEngine::watch_server),
// and the probe's fetch id, past any slot's.
inline constexpr std::size_t kProbeBytes = 64;
inline constexpr std::uint32_t kProbeId = engine::FetchId{engine::FetchId::Kind::block, engine::FetchId::kMaxIndex}.pack();
using Clock = std::chrono::steady_clock;
}  // namespace driver

class ReadEngine::Impl {
 public:
  using Clock = driver::Clock;
  explicit Impl(const EngineOptions& o)
      : chunk(engine::chunk_of(o)),
        readahead_max(o.readahead_bytes),
        wanted_depth(std::max(o.read_depth, 1u)),
        readahead_depth(std::max(o.readahead_depth, 1u)),
        first_read(o.first_read_bytes == 0 ? 0
                                           : std::min((o.first_read_bytes + engine::kPage - 1) / engine::kPage * engine::kPage, chunk / 2)),
        direct_enabled(o.direct),
        direct_min_override(o.direct_min_bytes),
        ring_size(engine::slots_of(o) * chunk),
        ring(take_ring(ring_size + driver::kProbeBytes)),  // resident already when a closed session left it spare
        cache(engine::slots_of(o)) {
    planner.readahead = o.readahead_bytes;
    if (rdma::startup_trace::enabled())
      rdma::startup_trace::mark("read engine made, its ring of " + std::to_string(ring_size) + " bytes taken");
  }

  void attach(std::unique_ptr<Fetcher> f);
  void detach() noexcept;
  void set_region(Region r, const proto::RegionDescriptor& d);
  void restart_at(std::uint64_t offset);
  std::uint64_t submit(Region r, std::uint64_t offset, std::span<std::uint8_t> dest, Callback done);
  void progress(std::chrono::milliseconds wait);
  void post_wanted();
  Stats snapshot() const {
    Stats s = stats;
    s.in_flight = in_flight;
    return s;
  }
  std::optional<Clock::time_point> next_deadline() const {
    if (!fetcher) return std::nullopt;
    std::optional<Clock::time_point> next;
    if (in_flight > 0 || probe_in_flight) next = last_sign_of_life() + stuck_after();
    if (liveness) next = next ? std::min(*next, next_probe) : next_probe;
    if (const int ms = fetcher->next_timeout_ms(); ms >= 0) {
      const auto timer = Clock::now() + std::chrono::milliseconds(ms);
      next = next ? std::min(*next, timer) : timer;
    }
    return next;
  }

  const std::size_t chunk;
  const std::size_t readahead_max;
  const unsigned wanted_depth;
  const unsigned readahead_depth;
  const std::size_t first_read;           // EngineOptions::first_read_bytes, page-rounded
  const bool direct_enabled;              // EngineOptions::direct
  const std::size_t direct_min_override;  // EngineOptions::direct_min_bytes
  const std::size_t ring_size;            // the slots' bytes; the ring has kProbeBytes more after them
  unsigned depth = 0;                     // what the fetcher allows, at most wanted_depth
  RingMemory ring;                        // huge-page aligned, never moves while registered
  engine::BlockCache cache;
  engine::RequestQueue requests;
  engine::Regions regions{};
  engine::PlannerState planner;
  unsigned in_flight = 0;           // fetches in flight: the flow control
  bool posts_deferred = false;      // the last call served from a head and posted nothing behind it (progress)
  Clock::time_point last_progress;  // for the stuck-Read timeout
  // Liveness, for a session in a fleet (ReadEngine::watch_server): the probes of the server's status
  // words, what they saw, and the smoothed Read latency the dead deadline scales with.
  std::optional<engine::LivenessPolicy> liveness;
  engine::HeartbeatWatch heartbeat;
  bool probe_in_flight = false;
  bool hung_logged = false;  // the heartbeat stopped while nothing waited on the server: said once
  Clock::time_point probe_posted, next_probe;
  std::chrono::microseconds smoothed_latency{0};
  std::uint8_t* probe_dest() const noexcept { return ring.get() + ring_size; }
  // The last completion, or what the fetcher heard since (a UDP datagram); a fetcher that hears
  // datagrams does not wait a whole record's latency to know the server still sends.
  Clock::time_point last_sign_of_life() const noexcept {
    const auto heard = fetcher && liveness ? fetcher->last_heard() : std::nullopt;
    return heard ? std::max(last_progress, *heard) : last_progress;
  }
  // What the dead deadline scales with: the smoothed Read latency, or none where datagrams are heard
  // as they come (a slow record is not silence).
  std::chrono::microseconds deadline_latency() const noexcept {
    return fetcher && fetcher->last_heard() ? std::chrono::microseconds(0) : smoothed_latency;
  }
  std::chrono::milliseconds stuck_after() const noexcept {
    if (!liveness) return std::chrono::milliseconds(driver::kStuckRead);
    return engine::dead_deadline(*liveness, deadline_latency());
  }
  void post_probe(Clock::time_point now);
  void on_probe_done(bool ok, const std::string& why);
  void check_alive(Clock::time_point now);
  std::string failure;  // the first failed completion, thrown by the next progress()
  std::unique_ptr<Fetcher> fetcher;
  const Interrupter* interrupter = nullptr;
  Stats stats;
  // Direct transfers: the readers' registered buffers, and the fetches in flight into them, by
  // number (FetchId kind direct).
  std::shared_ptr<BufferPool> pool;
  struct DirectFetch {
    bool used = false;
    std::uint64_t request = 0;  // whose destination it lands in
    std::uint64_t from = 0;     // region offset
    std::uint8_t* dest = nullptr;
    std::uint32_t length = 0;
    Clock::time_point posted;
    std::shared_ptr<BufferPool> pinned_in;  // the pool its buffer is pinned in (use_pool may swap)
  };
  std::vector<DirectFetch> direct;
  // Buffers a detached connection's Reads may still land in: pinned until the caller says that the
  // connection (its QP, and the MRs over them) is gone (release_pins).
  std::vector<std::pair<std::shared_ptr<BufferPool>, std::uint8_t*>> orphaned_pins;
  void release_pins() noexcept;

  // Registering the readers' buffers failed (RLIMIT_MEMLOCK, say): every byte goes through the ring
  // from then on, copied, as with direct transfers forced off.
  bool direct_failed = false;
  // The smallest direct transfer now; 0: none (off, no pool, registration failed, or a fetcher
  // that cannot).
  std::size_t direct_min() const noexcept {
    if (!direct_enabled || direct_failed || !pool || !fetcher) return 0;
    const std::size_t crossover = fetcher->direct_crossover();
    if (crossover == 0) return 0;
    return std::min(direct_min_override > 0 ? direct_min_override : crossover, chunk);
  }
  void use_pool(std::shared_ptr<BufferPool> p) {
    pool = std::move(p);  // Reads in flight keep their own pool pinned (DirectFetch::pinned_in)
    if (fetcher) fetcher->use_pool(pool);
  }
  void mark_direct_stale() noexcept;
  void fence_requests() noexcept;

 private:
  void invalidate(int keep = -1) noexcept;
  void issue(const std::vector<engine::FetchOrder>& orders);
  void on_done(std::uint32_t id, bool ok, const std::string& why);
  void on_head_done(std::uint32_t s, bool ok, const std::string& why);
  void issue_direct(const engine::FetchOrder& o, Clock::time_point now);
  void on_direct_done(std::size_t k, bool ok, const std::string& why);
  void landed(engine::Slot& slot, std::uint32_t bytes);
  void reap();
  bool serve_requests();
  void check_disconnect() {
    if (fetcher) fetcher->check_events();
  }
};

}  // namespace vod::client
