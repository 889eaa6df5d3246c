// SPDX-License-Identifier: LGPL-2.1-or-later
#include "windows/rdma_window_verbs.hpp"

#include <cstring>
#include <stdexcept>
#include <string>

#include "vod/log.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/error.hpp"

namespace vod::server::windows {

void RdmaWindowVerbs::bring_up(std::uint8_t responder_resources, std::uint8_t rnr_retry) {
  if (!id_) throw std::logic_error("memory windows: no rdma_cm_id to bring the QP up with");
  rdma::bring_up_passive_qp(id_, qp_, responder_resources, rnr_retry);
}

std::uint32_t RdmaWindowVerbs::alloc_window() {
  windows_.push_back(rdma::alloc_type2_window(pd_));
  return static_cast<std::uint32_t>(windows_.size() - 1);
}

void RdmaWindowVerbs::post_binds(std::span<const BindRequest> binds, std::uint64_t wr_id) {
  if (binds.empty()) return;
  std::vector<ibv_send_wr> wrs(binds.size());
  for (std::size_t i = 0; i < binds.size(); ++i) {
    const BindRequest& b = binds[i];
    ibv_send_wr& wr = wrs[i];
    wr.opcode = IBV_WR_BIND_MW;
    wr.bind_mw.mw = windows_.at(b.window).get();
    wr.bind_mw.rkey = b.rkey;
    wr.bind_mw.bind_info.mr = b.mr;
    wr.bind_mw.bind_info.addr = b.region.addr;
    wr.bind_mw.bind_info.length = b.region.length;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
    if (i + 1 < wrs.size()) wr.next = &wrs[i + 1];
  }
  if (fail_every_ && ++posts_ % fail_every_ == 0) wrs.back().bind_mw.bind_info.length += wrs.back().bind_mw.bind_info.mr->length;
  wrs.back().wr_id = wr_id;
  wrs.back().send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(qp_, wrs.data(), &bad))
    rdma::throw_error("ibv_post_send", err, rdma::device_name(pd_->context),
                      "posting " + std::to_string(wrs.size()) + " memory window binds");
}

void RdmaWindowVerbs::to_error() noexcept {
  if (int err = rdma::move_to_error(qp_)) log::warn("auth", std::string("moving a QP to the error state failed: ") + std::strerror(err));
}

}  // namespace vod::server::windows
