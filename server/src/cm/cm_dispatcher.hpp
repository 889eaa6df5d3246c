// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's rdma_cm events, each routed once. The listener's channel is in the event loop; a
// CONNECT_REQUEST goes to the connect-request handler (cm::Admitter: admission, then the chosen
// transport), a DEVICE_REMOVAL stops the server, and every other event goes to the endpoint that
// owns its id, through the route number in the id's context (routes.hpp). One switch here, one per
// owner.
#pragma once

#include <cstdint>
#include <functional>

#include "cm/routes.hpp"
#include "loop/reactor.hpp"
#include "vod/rdma/connection.hpp"

namespace vod::server::cm {

class CmDispatcher {
 public:
  // `on_connect_request` owns the event's new id from there (it accepts or rejects it).
  CmDispatcher(loop::Reactor& reactor, rdma::Listener& listener, Routes& routes, std::function<void(rdma::CmEvent&)> on_connect_request,
               std::function<void()> on_device_removal);
  CmDispatcher(const CmDispatcher&) = delete;
  CmDispatcher& operator=(const CmDispatcher&) = delete;

  // Runs after every batch of events (they may have changed the connection counts).
  void on_change(std::function<void()> f) { on_change_ = std::move(f); }
  std::uint64_t unrouted() const noexcept { return unrouted_; }  // events dropped: no route

 private:
  void on_readable();
  void dispatch(rdma::CmEvent& event);

  rdma::Listener& listener_;
  Routes& routes_;
  std::function<void(rdma::CmEvent&)> on_connect_request_;
  std::function<void()> on_device_removal_;
  std::function<void()> on_change_;
  std::uint64_t unrouted_ = 0;
  loop::Reactor::Registration in_loop_;  // last: leaves the loop first
};

}  // namespace vod::server::cm
