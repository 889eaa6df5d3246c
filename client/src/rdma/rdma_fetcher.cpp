// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rdma/rdma_fetcher.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/direct_crossover.hpp"
#include "vod/client/buffer_pool.hpp"
#include "vod/client/errors.hpp"
#include "vod/rdma/error.hpp"
#include "vod/rdma/startup_trace.hpp"

namespace vod::client {

ibv_mr* RdmaFetcher::register_ring(rdma::ClientEndpoint& ep, std::uint8_t* ring, std::size_t bytes) {
  ep.memory.push_back(rdma::register_memory(ep.pd.get(), ring, bytes, rdma::read_sink_access(ep.limits), "the client read ring"));
  return ep.memory.back().get();
}

RdmaFetcher::RdmaFetcher(rdma::ClientEndpoint& ep, std::uint8_t* ring, std::size_t ring_size, ibv_mr* ring_mr, unsigned depth,
                         std::size_t max_read)
    : ep_(ep), hub_(ep.cq.hub), ring_(ring), ring_size_(ring_size), depth_(depth), max_read_(max_read) {
  ibv_mr* first = ring_mr ? ring_mr : register_ring(ep, ring, ring_size);
  if (first->addr != ring_ || first->length == 0 || first->length > ring_size_)
    throw std::logic_error("RdmaFetcher: the ring's MR is not a piece at its start");
  pieces_.assign((ring_size_ + first->length - 1) / first->length, nullptr);
  pieces_[0] = first;
  owner_ = ep.cq.hub->add_owner([this](const ibv_wc& wc, rdma::WorkId id) {
    if (id.kind != rdma::work_kind(FetchWork::read) && segments_) {
      if (auto why = segments_->on_completion(wc, id); !why.empty() && failure_.empty()) failure_ = why;
      post_waiting();
      return;
    }
    if (id.kind != rdma::work_kind(FetchWork::read) || !done_) return;
    --plain_in_flight_;
    post_waiting();
    if (segments_) segments_->release_throttled();
    if (wc.status == IBV_WC_SUCCESS) return done_(id.index, true, {});
    const std::string why =
        std::string("RDMA Read failed: ") + ibv_wc_status_str(wc.status) + " (vendor error " + std::to_string(wc.vendor_err) + ")";
    if (failure_.empty()) failure_ = why;
    done_(id.index, false, why);
  });
}

// Completions of this connection still in the shared CQ are dropped by the hub from now on.
RdmaFetcher::~RdmaFetcher() {
  segments_.reset();           // it stops the QP while the endpoint is still there (the owner detaches first)
  hub_->remove_owner(owner_);  // the hub outlives every endpoint on it
}

void RdmaFetcher::use_segments(const proto::RegionDescriptor& arena, const proto::RegionDescriptor& table, std::uint32_t movie_index,
                               std::uint64_t size, bool window) {
  if (!segments_ && table.empty()) return;
  if (!segments_)
    segments_ = std::make_unique<SegmentReader>(
        ep_, owner_, batch_, depth_ + kSpareReads, [this] { return plain_in_flight_; },
        [this](std::uint32_t slot, bool ok, const std::string& why) {
          if (!ok && failure_.empty() && !segments_->outside_pending()) failure_ = why;  // bytes outside a window lose no connection
          if (done_) done_(slot, ok, why);
        });
  segments_->use(arena, table, movie_index, size, window);
}

void RdmaFetcher::fetch(std::uint32_t slot, Region region, const proto::RegionDescriptor& where, std::uint64_t offset, std::uint32_t length,
                        std::uint8_t* dest) {
  if (region == Region::movie && segments_ && segments_->active())
    return segments_->fetch(slot, offset, length, dest, sink_for(dest, length).lkey);
  const rdma::WorkId tag{owner_, rdma::work_kind(FetchWork::read), slot};
  const Waiting w{tag.pack(), dest, length, sink_for(dest, length).lkey, where.addr + offset, where.rkey};
  // Beside a segment reader, the send queue holds depth + kSpareReads Reads in all: a Read that
  // does not fit waits for one to complete.
  if (segments_ && (!waiting_.empty() || plain_in_flight_ + segments_->reads_in_flight() >= depth_ + kSpareReads)) {
    waiting_.push_back(w);
    return;
  }
  ++plain_in_flight_;
  batch_.add(w.wr_id, w.dest, w.length, w.lkey, w.remote, w.rkey);
}

std::size_t RdmaFetcher::direct_crossover() const noexcept { return engine::direct_crossover(ep_.limits.name, max_read_); }

const ibv_mr& RdmaFetcher::pool_sink_for(const std::uint8_t* dest, std::uint32_t length) {
  const auto arena = pool_ ? pool_->arena_of(dest, length) : std::nullopt;
  if (!arena) throw std::logic_error("RdmaFetcher: a fetch lands neither in the ring nor in the buffer pool");
  if (pool_mrs_.size() <= *arena) pool_mrs_.resize(*arena + 1, nullptr);
  ibv_mr*& mr = pool_mrs_[*arena];
  if (!mr) {
    // A pool arena is a Read's sink like the ring: local write, and remote write on iWARP only.
    const std::span<std::uint8_t> bytes = pool_->arena(*arena);
    ep_.memory.push_back(
        rdma::register_memory(ep_.pd.get(), bytes.data(), bytes.size(), rdma::read_sink_access(ep_.limits), "a reader's buffer pool"));
    mr = ep_.memory.back().get();
  }
  return *mr;
}

const ibv_mr& RdmaFetcher::sink_for(const std::uint8_t* dest, std::uint32_t length) {
  if (dest < ring_ || dest >= ring_ + ring_size_) return pool_sink_for(dest, length);
  const std::size_t piece = pieces_[0]->length;
  const std::size_t at = static_cast<std::size_t>(dest - ring_);
  const std::size_t index = at / piece;
  if (at + length > std::min(ring_size_, (index + 1) * piece))
    throw std::logic_error("RdmaFetcher: a fetch straddles two pieces of the ring");
  ibv_mr*& mr = pieces_[index];
  if (!mr) {
    const std::size_t bytes = std::min(piece, ring_size_ - index * piece);
    mr = register_ring(ep_, ring_ + index * piece, bytes);
    if (rdma::startup_trace::enabled())
      rdma::startup_trace::mark("piece " + std::to_string(index) + " of the ring registered (" + std::to_string(bytes) + " bytes)");
  }
  return *mr;
}

void RdmaFetcher::post_waiting() {
  while (!waiting_.empty() && plain_in_flight_ + segments_->reads_in_flight() < depth_ + kSpareReads) {
    const Waiting w = waiting_.front();
    waiting_.pop_front();
    ++plain_in_flight_;
    batch_.add(w.wr_id, w.dest, w.length, w.lkey, w.remote, w.rkey);
  }
}

void RdmaFetcher::flush() {
  if (int err = batch_.post(ep_.qp.get())) throw ConnectionLost(std::string("ibv_post_send of RDMA Reads failed: ") + std::strerror(err));
}

void RdmaFetcher::poll() {
  // Completions of every connection on the hub are handled here; each lands in its own engine.
  ep_.cq.hub->poll();
  if (segments_)
    if (auto refusal = segments_->take_refusal(); !refusal.empty())
      throw ClientError(ErrorKind::rejected, "the server refused a read: " + refusal);
  if (segments_)
    if (auto outside = segments_->take_outside(); !outside.empty()) throw ClientError(ErrorKind::out_of_range, outside);
  if (segments_ && failure_.empty()) failure_ = segments_->take_failure();
  if (!failure_.empty()) throw ConnectionLost(std::exchange(failure_, {}));
  flush();  // Reads the segment reader decided on while handling completions
}

void RdmaFetcher::check_events() {
  while (auto e = ep_.events.next(std::chrono::milliseconds(0))) {
    switch (e->type()) {
      case RDMA_CM_EVENT_DISCONNECTED:
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
      case RDMA_CM_EVENT_ADDR_CHANGE: throw ConnectionLost(std::string("the server connection ended: ") + e->type_name());
      default: break;
    }
  }
}

void RdmaFetcher::arm() {
  if (ep_.cq.hub->armed()) return;
  try {
    ep_.cq.hub->arm();
  } catch (const rdma::RdmaError& e) {
    throw ConnectionLost(e.what());
  }
}

}  // namespace vod::client
