// SPDX-License-Identifier: LGPL-2.1-or-later
// WindowVerbs on rdma-core: one connection's QP (its own, made with rdma::create_qp), its PD and its
// type-2 memory windows. Also home of the test hook --test-fail-binds.
#pragma once

#include <rdma/rdma_cma.h>

#include <vector>

#include "vod/rdma/handles.hpp"
#include "windows/window_binding.hpp"

namespace vod::server::windows {

class RdmaWindowVerbs final : public WindowVerbs {
 public:
  // `id` is needed by bring_up() alone (null: the QP is brought up by its owner).
  RdmaWindowVerbs(rdma_cm_id* id, ibv_pd* pd, ibv_qp* qp) noexcept : id_(id), pd_(pd), qp_(qp) {}

  void bring_up(std::uint8_t responder_resources, std::uint8_t rnr_retry) override;
  std::uint32_t alloc_window() override;
  std::uint32_t window_rkey(std::uint32_t window) const override { return windows_.at(window)->rkey; }
  void free_window(std::uint32_t window) noexcept override {
    if (window < windows_.size()) windows_[window].reset();
  }
  void post_binds(std::span<const BindRequest> binds, std::uint64_t wr_id) override;
  void to_error() noexcept override;

  // A test hook (vod-server --test-fail-binds N): every Nth post_binds() of the process asks the
  // device for a window longer than its MR, which the device refuses with a failed completion, so
  // tests reach the bind-failure paths on real rdma-core (VoD and live alike). 0: off.
  static void fail_every(unsigned n) noexcept { fail_every_ = n; }

 private:
  static inline unsigned fail_every_ = 0;  // the test hook's setting, and posts counted for it
  static inline unsigned posts_ = 0;
  rdma_cm_id* id_;
  ibv_pd* pd_;
  ibv_qp* qp_;
  std::vector<rdma::MemoryWindow> windows_;  // by handle; a freed one stays as an empty slot
};

}  // namespace vod::server::windows
