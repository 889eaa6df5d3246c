// SPDX-License-Identifier: LGPL-2.1-or-later
// Draining a QP before it is destroyed, one way for every transport and every device.
//
// A QP that shares a CQ must not be destroyed, nor its room in the CQ given back, while a
// completion of it can still arrive. QpDrain moves the QP to the error state (rdma::move_to_error),
// after which every work request it still has completes, as a flush; its owner counts the work
// requests it posted that have not completed (a segment channel's receives, sends and binds; a
// viewer's sends and receives; a window binding's chain), and the QP is drained when that count is
// 0. No marker work request posted after the transition: siw never completes a Send posted to a
// user QP in the error state, and rxe in Linux 6.1 never completes a receive posted after it. A
// count is exact only if every Send is covered by a signaled one at or after it (a successful
// unsignaled Send leaves no completion): the owners keep their last posted Send signaled.
//
// DrainingConnections holds the connections whose QPs drain, reaps them as their counts reach 0
// (after each poll of the CQ, and every kReapEvery while any is left), and destroys one anyway
// after kDrainLimit, saying so.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "loop/reactor.hpp"
#include "vod/log.hpp"
#include "vod/rdma/connection.hpp"

namespace vod::server::cm {

class QpDrain {
 public:
  using Clock = std::chrono::steady_clock;

  // Moves `qp` to the error state (again, harmlessly, when a disconnect already did). Once only;
  // `who` names it in the warning a failure logs.
  void begin(ibv_qp* qp, const std::string& who) {
    if (begun_) return;
    begun_ = true;
    began_ = Clock::now();
    if (int err = rdma::move_to_error(qp)) log::warn("server", who + ": ibv_modify_qp to the error state failed: " + std::strerror(err));
  }
  bool begun() const noexcept { return begun_; }
  Clock::time_point began() const noexcept { return began_; }
  // `outstanding`: the owner's count of its work requests not yet completed.
  bool drained(std::uint64_t outstanding) const noexcept { return begun_ && outstanding == 0; }

 private:
  bool begun_ = false;
  Clock::time_point began_{};
};

// `Connection` has: bool drained() const; QpDrain::Clock::time_point drain_began() const;
// const std::string& peer() const.
template <class Connection>
class DrainingConnections {
 public:
  static constexpr std::chrono::seconds kDrainLimit{5};  // then its QP is destroyed anyway
  static constexpr std::chrono::milliseconds kReapEvery{100};

  // `tag`: the log's. `before_reap`: polls the CQ the drains' flushes arrive in (may be empty).
  DrainingConnections(loop::Reactor& reactor, std::string tag, std::function<void()> before_reap = {})
      : reactor_(reactor), tag_(std::move(tag)), before_reap_(std::move(before_reap)) {}
  DrainingConnections(const DrainingConnections&) = delete;
  DrainingConnections& operator=(const DrainingConnections&) = delete;
  ~DrainingConnections() { clear(); }

  void add(std::unique_ptr<Connection> c) {
    draining_.push_back(std::move(c));
    reap();
  }
  // Destroys those drained (force: all, at exit), and looks again soon while any is left.
  void reap(bool force = false) {
    if (draining_.empty()) return;
    if (before_reap_) before_reap_();
    const auto now = QpDrain::Clock::now();
    std::erase_if(draining_, [&](const std::unique_ptr<Connection>& c) {
      if (c->drained()) return true;
      if (now - c->drain_began() > kDrainLimit) {
        log::warn(tag_, c->peer() + ": its work requests did not flush within " + std::to_string(kDrainLimit.count()) +
                            " s; destroying its QP anyway");
        return true;
      }
      if (force) log::debug(tag_, c->peer() + ": the server stops: destroying its QP before its last flushes arrived");
      return force;
    });
    if (!draining_.empty() && !timer_.armed()) timer_ = reactor_.at(now + kReapEvery, [this] { reap(); });
  }
  void clear() {
    timer_.cancel();
    draining_.clear();
  }
  std::size_t size() const noexcept { return draining_.size(); }
  bool empty() const noexcept { return draining_.empty(); }

 private:
  loop::Reactor& reactor_;
  std::string tag_;
  std::function<void()> before_reap_;
  std::vector<std::unique_ptr<Connection>> draining_;
  loop::Reactor::Timer timer_;  // armed while any drains
};

}  // namespace vod::server::cm
