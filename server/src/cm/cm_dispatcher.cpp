// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cm/cm_dispatcher.hpp"

#include <chrono>
#include <exception>
#include <string>

#include "vod/log.hpp"

namespace vod::server::cm {

CmDispatcher::CmDispatcher(loop::Reactor& reactor, rdma::Listener& listener, Routes& routes,
                           std::function<void(rdma::CmEvent&)> on_connect_request, std::function<void()> on_device_removal)
    : listener_(listener),
      routes_(routes),
      on_connect_request_(std::move(on_connect_request)),
      on_device_removal_(std::move(on_device_removal)) {
  in_loop_ = reactor.add(listener_.events().fd(), [this] { on_readable(); });
}

void CmDispatcher::on_readable() {
  while (auto event = listener_.events().next(std::chrono::milliseconds(0))) {
    try {
      dispatch(*event);
    } catch (const std::exception& e) {
      log::error("server", std::string("while handling ") + event->type_name() + ": " + e.what());
    }
  }
  if (on_change_) on_change_();
}

void CmDispatcher::dispatch(rdma::CmEvent& event) {
  switch (event.type()) {
    case RDMA_CM_EVENT_CONNECT_REQUEST: return on_connect_request_(event);
    case RDMA_CM_EVENT_DEVICE_REMOVAL: log::error("server", "an RDMA device was removed; stopping"); return on_device_removal_();
    default: break;
  }
  CmEndpoint* owner = routes_.find(event.id());
  if (!owner) {
    ++unrouted_;  // its owner let go of it (retired, rejected): acknowledged and dropped
    log::debug("server", std::string("event ") + event.type_name() + " for a connection that is gone");
    return;
  }
  owner->on_cm_event(event);
}

}  // namespace vod::server::cm
