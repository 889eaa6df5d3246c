// SPDX-License-Identifier: LGPL-2.1-or-later
// How a ReadEngine gets blocks of a remote region into the slots of its ring: by one-sided RDMA
// Read (RdmaFetcher) or by UDP Write-Record (UdpFetcher). The engine decides what to fetch, where
// it lands and what is stale; a fetcher only moves bytes and says when a slot is filled.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vod/protocol/region_descriptor.hpp"

namespace vod::client {

class BufferPool;

// Remote regions an engine reads. Requests and cached blocks are tagged with one of these.
enum class Region : std::uint8_t { movie = 0, catalog = 1, index = 2 };

class Fetcher {
 public:
  // A fetch finished: `ok` with all its bytes in place, or not (the message says why; the
  // connection is then considered lost).
  using Done = std::function<void(std::uint32_t slot, bool ok, const std::string& failure)>;

  virtual ~Fetcher() = default;

  // Where the engine's completions go. Set once, before the first fetch.
  virtual void on_done(Done done) = 0;
  // Queues moving `length` bytes at `offset` of `region` (described by `where`) into `dest`, the
  // memory of ring slot `slot`. Throws ConnectionLost when the transport refuses.
  virtual void fetch(std::uint32_t slot, Region region, const proto::RegionDescriptor& where, std::uint64_t offset, std::uint32_t length,
                     std::uint8_t* dest) = 0;
  // Starts what fetch() queued since the last flush (one doorbell for a round of fetches). Throws
  // ConnectionLost when the transport refuses.
  virtual void flush() {}
  // True when a started fetch can be abandoned: forget() then guarantees nothing more is written
  // into its slot (UDP drops its datagrams). An RDMA Read, once posted, cannot be recalled.
  virtual bool can_recall() const noexcept = 0;
  virtual void forget(std::uint32_t slot) noexcept = 0;
  // True when a block may be fetched in parts into its slot: after a start or seek the engine
  // fetches a small head first and the rest of the block later, and `slot` of such a part is a
  // number past the ring's slots (a slot's number plus a multiple of their count). An RDMA Read
  // costs the server nothing per part; a UDP fetch is a request the server answers, so UDP keeps
  // whole blocks.
  virtual bool fetches_in_parts() const noexcept { return false; }

  // Runs completions (and, for UDP, takes datagrams, retransmits and times out). Throws
  // ConnectionLost when the transport has failed.
  virtual void poll() = 0;
  // For waiting: fds that turn readable when poll() may have work, after arm(). A control fd
  // (the rdma_cm channel) is checked by check_events().
  virtual std::vector<int> wait_fds() const = 0;
  virtual int control_fd() const noexcept = 0;
  virtual void check_events() = 0;
  virtual void arm() = 0;
  virtual bool armed() const noexcept = 0;
  virtual void consume() noexcept = 0;
  // The longest the caller may sleep before poll() has timers to run (UDP retransmission), or -1.
  virtual int next_timeout_ms() const noexcept { return -1; }

  // What a fetch is on this transport, for messages: "RDMA Read", "Write-Record range over UDP".
  virtual const char* fetch_name() const noexcept = 0;
  // The transport's own figures for logs (UDP: datagrams, repairs, drops and why); empty when it
  // has none (RDMA: the engine's Stats say it all).
  virtual std::string summary() const { return {}; }
  // The movie the movie and index regions are now: its name's hash, in catalog `generation`. UDP
  // names them in every request; an RDMA Read needs nothing (its rkey says where).
  virtual void select_movie(std::uint64_t /*name_hash*/, std::uint32_t /*generation*/) noexcept {}

  // The movie region is a movie the server serves from its segment cache (protocol version 2):
  // `table` describes its segment table, `arena` the slots, and fetches of Region::movie read through
  // them (an empty table: the movie is served whole). Only RDMA Read fetchers can. `window`: a
  // live channel's DVR window, read by stream offsets (vod/protocol/live_window.hpp).
  virtual void use_segments(const proto::RegionDescriptor& /*arena*/, const proto::RegionDescriptor& /*table*/,
                            std::uint32_t /*movie_index*/, std::uint64_t /*size*/, bool /*window*/ = false) {}
  // True when a fetch that just failed read a window's bytes no longer in it: its next poll()
  // throws ClientError(out_of_range), and the connection is not lost.
  virtual bool outside_window() const noexcept { return false; }

  // Direct transfers (zero copy): the smallest fetch worth making straight into a reader's
  // registered buffer on this transport (the crossover), or 0 when it cannot fetch into anything but
  // the ring (UDP: Write-Record lands where the receiver advertised, the ring).
  virtual std::size_t direct_crossover() const noexcept { return 0; }
  // The pool whose buffers fetches may land in from now on (they are registered when first used).
  virtual void use_pool(std::shared_ptr<BufferPool> /*pool*/) {}

  // True while a fetch waits for something only the server's process answers, not its NIC: a segment
  // fault (RDMA), any range (Write-Record). A server whose heartbeat stopped then fails it.
  virtual bool waits_on_server() const noexcept { return false; }
  // When the server was last heard from between completions (UDP: a datagram of a range still
  // coming), or nothing when only completions say so (RDMA). A watched server is dead when neither
  // a completion nor this moved for the deadline.
  virtual std::optional<std::chrono::steady_clock::time_point> last_heard() const noexcept { return std::nullopt; }

  // Fetches in flight at most, and the largest single fetch.
  virtual unsigned depth() const noexcept = 0;
  virtual std::size_t max_fetch() const noexcept = 0;
};

}  // namespace vod::client
