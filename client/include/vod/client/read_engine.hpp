// SPDX-License-Identifier: LGPL-2.1-or-later
// The client's read pipeline: chunk-aligned blocks of remote regions fetched into one ring (by
// RDMA Read or by UDP Write-Record: a Fetcher), with read-ahead, a small block cache, and requests
// served from it.
//
// It runs on its caller's thread: submit() queues a request, progress() posts Reads (never more
// than the negotiated depth in flight), reaps completions and fills requests. Nothing runs behind
// the caller's back, so pausing is simply not asking for more; wait_fd() lets an event loop wait
// for completions. A seek or a switch bumps the epoch: Reads already posted still land in their
// slots (a posted RDMA Read cannot be recalled), but their completions are discarded, never
// delivered.
//
// Slot states:   free --post--> in_flight --completion, same epoch--> ready --evict--> free
//                                    \--completion, older epoch (or error)--> free
//
// Inside (client/src/engine/): a block cache (the slots), a request queue, a pure read planner
// that decides what to fetch (table-tested), and this class, the driver that fetches, reaps and
// serves.
//
// Ramp-up: after a start or a seek, the first block a request needs is fetched in parts on an RDMA
// connection: a small head (first_read_bytes at the request's offset) goes out alone, and nothing
// else is posted behind it, so the first bytes cost one small Read, whatever was queued before.
// The rest of that block, and read-ahead, are posted once a reader has taken bytes from the head
// (or needs more of the block than the head holds), by the progress() after the one that served
// the reader from the head: that call returns the reader's bytes without posting anything. A prefetch()ed head that nobody reads yet
// holds read-ahead back the same way. The parts of a block never overlap.
//
// Zero copy: a request whose destination lies in the buffer pool given to use_pool() (registered
// memory, BufferPool) has its blocks fetched straight into it (direct transfers), each part of a
// block it covers that is at least the crossover, over a transport that can (RDMA). A reader that
// queues such requests ahead (advertises its buffers) gets its read-ahead that way: the ring's own
// read-ahead waits while one is queued. The rest (small heads and tails, cached bytes, the ramp's
// head, requests into other memory, UDP) goes through the ring and is copied, counted in
// Stats::bytes_copied. A posted Read cannot be recalled: a direct Read pins its buffer in the pool
// until it completes (BufferPool), a cancelled request's Reads complete unseen, and after a switch
// nothing is served over a Read still landing from before it.
//
// Order within progress(): completions are reaped and requests served before anything new is
// posted, so a caller's bytes never wait behind the posting of Reads it did not ask for (on a
// Soft-RoCE device talking to itself, posting a Read runs the whole transfer before returning:
// posting the rest of a fresh open's first block and its read-ahead, ~1 MiB, took 15 ms in the
// guest, which is why a call that served from a head leaves them to the next call).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vod/client/fetcher.hpp"
#include "vod/client/interrupter.hpp"
#include "vod/client/stats.hpp"
#include "vod/defaults.hpp"
#include "vod/protocol/region_descriptor.hpp"
#include "vod/rdma/connection.hpp"

namespace vod::client {

struct EngineOptions {
  std::size_t chunk_size = defaults::kChunkBytes;           // bytes per RDMA Read; at least 8 KiB
  std::size_t readahead_bytes = defaults::kReadaheadBytes;  // the most read-ahead; also sizes the ring
  unsigned read_depth = defaults::kReadDepth;               // wanted; the connection may allow less
  // Read-ahead Reads in flight at most. An RC QP executes Reads in order and a posted Read cannot
  // be recalled, so after a seek the new position's Read waits behind these: fewer means faster
  // seeks. Requested blocks (what a caller is waiting for) may use the whole read_depth.
  unsigned readahead_depth = defaults::kReadaheadDepth;
  // The size of the first Read after a start or a seek (ramp-up, above); 0: whole chunks only.
  std::size_t first_read_bytes = defaults::kFirstReadBytes;
  // Direct transfers (zero copy, below): on when a reader reads into a buffer pool's memory; false
  // forces every byte through the ring (--zero-copy off: tests, bisecting).
  bool direct = true;
  // The smallest direct transfer; 0: the crossover of the device's kind (engine/direct_crossover.hpp).
  std::size_t direct_min_bytes = 0;
};

// The bytes of the ring an engine with these options registers: a chunk per Read in flight, the
// read-ahead, and two more.
std::size_t ring_bytes_for(const EngineOptions& o) noexcept;

// Options for `sessions` engines whose rings fit in `budget` bytes together: `o` itself when they
// fit; else less read-ahead (down to one chunk), then a smaller read depth (down to 2); nullopt
// when even that does not fit. A pure decider (table-tested): `vod-client bench` sizes a thousand
// viewers' rings to the memory it has with it instead of being killed by the OOM killer.
std::optional<EngineOptions> fit_rings(const EngineOptions& o, std::size_t sessions, std::uint64_t budget) noexcept;

class ReadEngine {
 public:
  // Completion of a request: bytes placed in its destination (short only at the region's end).
  using Callback = std::function<void(std::size_t bytes)>;

  explicit ReadEngine(const EngineOptions& options);
  ReadEngine(const ReadEngine&) = delete;
  ReadEngine& operator=(const ReadEngine&) = delete;
  ~ReadEngine();

  // Fetches through `fetcher` from now on. Slots from a previous fetcher are dropped; queued
  // requests stay and are re-driven on this one. Throws ClientError(usage) when a chunk is larger
  // than the fetcher's largest fetch.
  void attach(std::unique_ptr<Fetcher> fetcher);
  // By RDMA Read on `ep`, into the ring as registered on ep's PD by register_ring() (or, when
  // `ring_mr` is null, registered now); the MR is in ep.memory, so it goes away with the
  // connection. `depth` and `max_read` are what this connection allows.
  void attach(rdma::ClientEndpoint& ep, unsigned depth, std::size_t max_read, ibv_mr* ring_mr = nullptr);
  // Registers the ring on ep's PD (owned by ep.memory) for a later attach(ep, ...): an open does it
  // while its connect is on the wire (rdma::ConnectOptions::while_connecting), so that registering
  // it never stands between the connection coming up and the movie's first Read.
  ibv_mr* register_ring(rdma::ClientEndpoint& ep) const;
  // The connection is going: its completions are dropped from now on, and nothing counts as in
  // flight. Readers' buffers that its Reads may still land in stay pinned until release_pins(),
  // which the owner calls once the connection (its QP and MRs) is destroyed; attach() and the
  // destructor call it too.
  void detach() noexcept;
  void release_pins() noexcept;
  // Readers' registered buffers: requests into them are direct transfers (above). Kept across
  // attach()es; each connection registers the pool's arenas on its PD when it first needs them.
  void use_pool(std::shared_ptr<BufferPool> pool);
  // True when requests into the pool are fetched directly now (a pool, EngineOptions::direct, and a
  // fetcher that can).
  bool direct_active() const noexcept;
  // Direct Reads posted and not completed (their buffers pinned).
  std::size_t direct_in_flight() const noexcept;
  bool attached() const noexcept;
  // The ring fetches land in (a UDP fetcher advertises it as its Write-Record buffer).
  std::uint8_t* ring() const noexcept;
  // The fetcher's own figures for logs (Fetcher::summary); empty when detached.
  std::string transport_summary() const;
  // Which movie the movie and index regions are now (Fetcher::select_movie: UDP names it).
  void select_movie(std::uint64_t name_hash, std::uint32_t generation) noexcept;
  // The attached fetcher (null when detached), for what only its transport knows (use_segments).
  Fetcher* fetcher() const noexcept;

  // Where a region lives now. Changing the movie's descriptor (switch, reconnect) bumps the epoch.
  void set_region(Region r, const proto::RegionDescriptor& d);
  const proto::RegionDescriptor& region(Region r) const noexcept;

  // Fetches the movie's block at `offset` as if a request wanted it (its head first after a start
  // or seek), before any read-ahead, and moves the read-ahead window there: what an open does first
  // (the catalog and the index are read behind it), so that the first bytes are there when the caller
  // asks (post_wanted() sends it at once).
  void prefetch(std::uint64_t offset) noexcept;
  // Discards read-ahead and in-flight Reads for the movie, and moves the read-ahead window to
  // `offset`: what a seek does.
  void restart_at(std::uint64_t offset);
  // Read-ahead on or off (pause turns it off: no Read is posted that nobody asked for).
  void set_readahead(bool enabled) noexcept;
  // Narrows the read-ahead window (e.g. to some seconds of the movie's bitrate); it never grows
  // past EngineOptions::readahead_bytes, for which the ring was sized.
  void set_readahead_window(std::size_t bytes) noexcept;
  std::size_t readahead_window() const noexcept;
  // Read-ahead reads nothing from movie offset `end` on (~0: up to the movie's end): a title
  // reader's segment end, past which its next bytes may be another rendition's. Kept across seeks.
  void set_readahead_limit(std::uint64_t end) noexcept;

  // Watching the server, for a session in a fleet (docs/client.md, "Failover"): every `probe_every`
  // the engine reads the server's status words (the catalog header's bytes 44-51) with its other
  // fetches, and progress() throws ConnectionLost when the server is dead (nothing completed for
  // `dead_after`, or 4 × the smoothed Read latency when that is longer), hung (its heartbeat stood
  // still for `hung_after` while a read waited for its process) or draining. Without it, only a
  // fetch stuck for 15 s is taken for a dead connection. Kept across connections.
  struct ServerWatch {
    std::chrono::milliseconds probe_every{250};
    std::chrono::milliseconds hung_after{1000};
    std::chrono::milliseconds dead_after{1000};
    // A fleet URI's ?failover-ms: dead and hung after it, probed four times within it (every 250 ms
    // at most). Sessions and live sessions alike.
    static ServerWatch after(std::chrono::milliseconds failover) noexcept {
      return {std::min(failover / 4, std::chrono::milliseconds(250)), failover, failover};
    }
  };
  void watch_server(std::optional<ServerWatch> watch);

  // Queues a read of dest.size() bytes at `offset` of region `r`; `done` runs from progress().
  // A read at or past the end completes with 0 bytes; one that crosses it, with the bytes before.
  // Returns an id for cancel().
  std::uint64_t submit(Region r, std::uint64_t offset, std::span<std::uint8_t> dest, Callback done);
  // Forgets a queued request: its callback never runs and its destination is no longer written.
  void cancel(std::uint64_t id) noexcept;
  std::size_t pending() const noexcept;
  // True when the block holding `offset` of region `r` is cached or its Read is in flight.
  bool has_block(Region r, std::uint64_t offset) const noexcept;

  // Posts what can be posted, reaps completions and completes requests. Waits up to `wait` when
  // nothing completed. Throws ConnectionLost when a Read fails or the peer disconnects, and
  // Interrupted when the interrupter is raised.
  void progress(std::chrono::milliseconds wait);

  // Posts, now and in one ibv_post_send, what progress() would post (without reaping or waiting):
  // an open sends the movie's first bytes before it submits anything else.
  void post_wanted();

  // Blocking read built on submit/progress. Throws ConnectionLost.
  std::size_t read(Region r, std::uint64_t offset, std::span<std::uint8_t> dest);

  // The completion channel of the connection's CompletionHub (shared with the other connections on
  // that hub). For an external event loop (vod-proxy's asio): arm() asks for a notification on it
  // (call progress(0) after it, for completions that raced the arming); when it is readable,
  // consume() takes the notification, and progress(0) handles what completed.
  int wait_fd() const noexcept;
  void arm();
  void consume() noexcept;
  // While `i` is raised, progress() and read() throw Interrupted instead of waiting.
  void set_interrupter(const Interrupter* i) noexcept;
  // What the engine did so far, and the Reads in flight now (a snapshot: the engine's own count
  // is what its flow control runs on, and nobody else writes it).
  Stats stats() const;
  std::size_t chunk_size() const noexcept;
  std::size_t ring_bytes() const noexcept;  // what a fetcher may land in: the slots, then the status probes' bytes
  int cm_fd() const noexcept;
  // For an outside event loop that never calls progress() with a wait: every fd to watch (the
  // completion channel, then the connection's control channel: CM events or the UDP socket), and
  // the next moment progress(0) has work even if none of them became readable (a UDP record's
  // repair timer, the stuck-Read check). None while nothing is in flight and no timer runs.
  using Clock = std::chrono::steady_clock;
  std::vector<int> wait_fds() const;
  std::optional<Clock::time_point> next_deadline() const;

 private:
  // The block cache, the request queue, the read planner and the driver's state
  // (client/src/engine/, client/src/read_engine.cpp).
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vod::client
