// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rdma/rdma_fetcher.hpp"

#include <cstring>
#include <utility>

#include "vod/client/errors.hpp"
#include "vod/rdma/error.hpp"

namespace vod::client {

ibv_mr* RdmaFetcher::register_ring(rdma::ClientEndpoint& ep, std::uint8_t* ring, std::size_t ring_size) {
  ep.memory.push_back(rdma::register_memory(ep.pd.get(), ring, ring_size, rdma::read_sink_access(ep.limits), "the client read ring"));
  return ep.memory.back().get();
}

RdmaFetcher::RdmaFetcher(rdma::ClientEndpoint& ep, std::uint8_t* ring, std::size_t ring_size, ibv_mr* ring_mr, unsigned depth,
                         std::size_t max_read)
    : ep_(ep), mr_(ring_mr ? ring_mr : register_ring(ep, ring, ring_size)), depth_(depth), max_read_(max_read) {
  owner_ = ep.cq.hub->add_owner([this](const ibv_wc& wc, rdma::WorkId id) {
    if (id.kind != kRead || !done_) return;
    if (wc.status == IBV_WC_SUCCESS) return done_(id.index, true, {});
    const std::string why = std::string("RDMA Read failed: ") + ibv_wc_status_str(wc.status) + " (vendor error " + std::to_string(wc.vendor_err) + ")";
    if (failure_.empty()) failure_ = why;
    done_(id.index, false, why);
  });
}

// Completions of this connection still in the shared CQ are dropped by the hub from now on.
RdmaFetcher::~RdmaFetcher() { ep_.cq.hub->remove_owner(owner_); }

void RdmaFetcher::fetch(std::uint32_t slot, Region, const proto::RegionDescriptor& where, std::uint64_t offset, std::uint32_t length,
                        std::uint8_t* dest) {
  const rdma::WorkId tag{owner_, kRead, slot};
  batch_.add(tag.pack(), dest, length, mr_->lkey, where.addr + offset, where.rkey);
}

void RdmaFetcher::flush() {
  if (int err = batch_.post(ep_.qp.get()))
    throw ConnectionLost(std::string("ibv_post_send of RDMA Reads failed: ") + std::strerror(err));
}

void RdmaFetcher::poll() {
  // Completions of every connection on the hub are handled here; each lands in its own engine.
  ep_.cq.hub->poll();
  if (!failure_.empty()) throw ConnectionLost(std::exchange(failure_, {}));
}

void RdmaFetcher::check_events() {
  while (auto e = ep_.events.next(std::chrono::milliseconds(0))) {
    switch (e->type()) {
      case RDMA_CM_EVENT_DISCONNECTED:
      case RDMA_CM_EVENT_DEVICE_REMOVAL:
      case RDMA_CM_EVENT_ADDR_CHANGE:
        throw ConnectionLost(std::string("the server connection ended: ") + e->type_name());
      default:
        break;
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
