// SPDX-License-Identifier: LGPL-2.1-or-later
// A Fetcher for the read engine's unit tests: it records what the engine asks for and completes it
// when the test says so, writing the bytes only then (as a NIC does when the Read's response
// arrives), so a test sees exactly which memory a late completion would have written.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "vod/client/fetcher.hpp"
#include "vod/client/read_engine.hpp"

namespace vod::client {

// The engine the tests drive: blocks of `chunk`, four of read-ahead, depth 8, read-ahead depth 2.
inline EngineOptions test_engine_options(std::size_t chunk, std::size_t first_read, bool direct = true) {
  EngineOptions o;
  o.chunk_size = chunk;
  o.readahead_bytes = 4 * chunk;
  o.read_depth = 8;
  o.readahead_depth = 2;
  o.first_read_bytes = first_read;
  o.direct = direct;
  return o;
}

// A fetcher that records what the engine asks for and completes it when the test says so, filling
// the destination with the region's bytes (byte i of the region is i % 251) first.
class ManualFetcher final : public Fetcher {
 public:
  struct Fetch {
    std::uint32_t slot;
    Region region;
    std::uint64_t offset;
    std::uint32_t length;
    std::uint8_t* dest;
  };
  // `crossover` > 0: it can fetch straight into a buffer pool's memory (as RDMA can).
  explicit ManualFetcher(bool in_parts, unsigned depth = 8, std::size_t crossover = 0)
      : in_parts_(in_parts), depth_(depth), crossover_(crossover) {}
  void on_done(Done done) override { done_ = std::move(done); }
  void fetch(std::uint32_t slot, Region region, const proto::RegionDescriptor&, std::uint64_t offset, std::uint32_t length,
             std::uint8_t* dest) override {
    const bool in_ring = dest >= ring_lo && dest < ring_hi;
    if (!throw_on_fetch.empty() && !in_ring) throw std::runtime_error(throw_on_fetch);  // as registering a pool can
    log_.push_back({slot, region, offset, length, dest});
    pending_.push_back(log_.back());
    order_.push_back('f');
  }
  bool can_recall() const noexcept override { return false; }
  const char* fetch_name() const noexcept override { return "test fetch"; }
  void forget(std::uint32_t) noexcept override {}
  bool fetches_in_parts() const noexcept override { return in_parts_; }
  void poll() override {
    for (const Fetch& f : ready_) done_(f.slot, true, {});
    ready_.clear();
  }
  std::vector<int> wait_fds() const override { return {}; }
  int control_fd() const noexcept override { return -1; }
  void check_events() override { order_.push_back('c'); }
  void arm() override {}
  bool armed() const noexcept override { return true; }
  void consume() noexcept override {}
  unsigned depth() const noexcept override { return depth_; }
  std::size_t max_fetch() const noexcept override { return 1u << 20; }
  int next_timeout_ms() const noexcept override { return timer_ms_; }
  std::size_t direct_crossover() const noexcept override { return crossover_; }
  bool waits_on_server() const noexcept override { return server_work; }
  bool server_work = false;  // what waits_on_server() says (a segment fault outstanding, say)
  void set_timer(int ms) noexcept { timer_ms_ = ms; }
  // Non-empty: a fetch outside [ring_lo, ring_hi) throws this, posting nothing (registering a
  // reader's pool failed).
  std::string throw_on_fetch;
  const std::uint8_t* ring_lo = nullptr;
  const std::uint8_t* ring_hi = nullptr;  // -1: none (a UDP fetcher's repair timer)

  // Completes the oldest pending fetch (as an RC QP would), with the region's bytes.
  Fetch complete_next() {
    Fetch f = pending_.front();
    pending_.erase(pending_.begin());
    for (std::uint32_t i = 0; i < f.length; ++i) f.dest[i] = static_cast<std::uint8_t>((f.offset + i) % 251);
    ready_.push_back(f);
    return f;
  }
  const std::vector<Fetch>& log() const noexcept { return log_; }
  // What happened, in order: 'f' a fetch, 'c' a look at the CM channel; tests add their own marks.
  std::string& order() noexcept { return order_; }
  std::size_t pending() const noexcept { return pending_.size(); }

 private:
  bool in_parts_;
  unsigned depth_;
  std::size_t crossover_;
  Done done_;
  std::vector<Fetch> log_, pending_, ready_;
  std::string order_;
  int timer_ms_ = -1;
};

}  // namespace vod::client
