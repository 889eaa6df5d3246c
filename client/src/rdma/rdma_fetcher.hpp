// SPDX-License-Identifier: LGPL-2.1-or-later
// Blocks by one-sided RDMA Read: each fetch is one Read into the slot, tagged (owner, FetchWork::read, slot)
// on the connection's shared CQ; a round's Reads are posted together by flush(). The ring is
// registered on the connection's PD (and goes with it), by register_ring() while the connection is
// still being made, or else by the constructor.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "rdma/segment_reader.hpp"
#include "vod/client/fetcher.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/post.hpp"

namespace vod::client {

class RdmaFetcher final : public Fetcher {
 public:
  // Registers [ring, ring + bytes) on ep's PD, as a Read's sink (ep.memory owns the MR).
  static ibv_mr* register_ring(rdma::ClientEndpoint& ep, std::uint8_t* ring, std::size_t bytes);
  // Reads into the ring through `ring_mr` (registered on ep's PD by register_ring), or, when it is
  // null, registers the ring now. `ring_mr` may cover only the ring's first piece: then the ring
  // is registered piece by piece, each of ring_mr's length (a whole number of slots), by the first
  // fetch into it. Registering a fresh ring faults in and zeroes its every page, most of a fresh
  // process's open, and an open's first Reads (the head, the rest of its block, the catalog, the
  // index, the first read-ahead) all land in the first piece. `depth` Reads in flight at most, each
  // at most `max_read` bytes (both as the connection negotiated).
  RdmaFetcher(rdma::ClientEndpoint& ep, std::uint8_t* ring, std::size_t ring_size, ibv_mr* ring_mr, unsigned depth, std::size_t max_read);
  ~RdmaFetcher() override;

  void on_done(Done done) override { done_ = std::move(done); }
  void fetch(std::uint32_t slot, Region region, const proto::RegionDescriptor& where, std::uint64_t offset, std::uint32_t length,
             std::uint8_t* dest) override;
  void flush() override;
  bool can_recall() const noexcept override { return false; }
  const char* fetch_name() const noexcept override { return "RDMA Read"; }
  bool fetches_in_parts() const noexcept override { return true; }
  void forget(std::uint32_t) noexcept override {}
  void poll() override;
  std::vector<int> wait_fds() const override { return ep_.cq.hub->fds(); }
  int control_fd() const noexcept override { return ep_.events.fd(); }
  void check_events() override;
  void arm() override;
  bool armed() const noexcept override { return ep_.cq.hub->armed(); }
  void consume() noexcept override { ep_.cq.hub->consume(); }
  void use_segments(const proto::RegionDescriptor& arena, const proto::RegionDescriptor& table, std::uint32_t movie_index,
                    std::uint64_t size, bool window = false) override;
  std::string summary() const override { return segments_ ? segments_->summary() : std::string(); }
  bool outside_window() const noexcept override { return segments_ && segments_->outside_pending(); }
  std::size_t direct_crossover() const noexcept override;
  // Another pool: its arenas are registered as Reads need them. The old pool's MRs stay in
  // ep_.memory until the connection goes; no Read names them again (its Reads in flight keep
  // their pool alive through the engine's pins).
  void use_pool(std::shared_ptr<BufferPool> pool) override {
    if (pool != pool_) pool_mrs_.clear();
    pool_ = std::move(pool);
  }
  unsigned depth() const noexcept override { return depth_; }
  std::size_t max_fetch() const noexcept override { return max_read_; }
  bool waits_on_server() const noexcept override { return segments_ && segments_->waiting_on_server(); }

 private:
 public:
  // Send-queue room beyond the read depth, for the segment reader's table Reads and checks: a
  // session's send queue is depth + kSpareReads Reads and SegmentReader::kMaxCredits requests.
  static constexpr unsigned kSpareReads = 4;

 private:
  // The MR whose range holds [dest, dest + length): its piece's of the ring, or its arena's of the
  // buffer pool (direct transfers), registered now if it was not yet. A fetch never straddles two
  // pieces: they part at slot boundaries, and a direct fetch lies inside one buffer.
  const ibv_mr& sink_for(const std::uint8_t* dest, std::uint32_t length);
  const ibv_mr& pool_sink_for(const std::uint8_t* dest, std::uint32_t length);

  rdma::ClientEndpoint& ep_;  // outlives this fetcher: its owner detaches it before the endpoint goes
  rdma::CompletionHub* hub_;
  std::uint8_t* ring_;
  std::size_t ring_size_;
  std::vector<ibv_mr*> pieces_;       // the ring's MRs by piece (owned by ep_.memory); null: not yet
  std::shared_ptr<BufferPool> pool_;  // readers' registered buffers (direct transfers), if any
  std::vector<ibv_mr*> pool_mrs_;     // the pool's arenas registered on this PD (owned by ep_.memory); null: not yet
  std::uint32_t owner_ = 0;
  unsigned depth_;
  std::size_t max_read_;
  Done done_;
  std::string failure_;
  rdma::ReadBatch batch_;
  unsigned plain_in_flight_ = 0;  // this fetcher's own Reads posted and not completed
  struct Waiting {
    std::uint64_t wr_id;
    std::uint8_t* dest;
    std::uint32_t length, lkey;
    std::uint64_t remote;
    std::uint32_t rkey;
  };
  std::deque<Waiting> waiting_;  // its own Reads that did not fit the send queue yet
  void post_waiting();
  std::unique_ptr<SegmentReader> segments_;  // made for the first movie served from the segment cache
};

}  // namespace vod::client
