// SPDX-License-Identifier: LGPL-2.1-or-later
// Whoever owns a connection's rdma_cm_id (a VoD connection, a live viewer). The CM dispatcher hands
// it every event of that id after the connect request, through the route it holds
// (cm_dispatcher.hpp): one switch in the dispatcher, one per owner.
#pragma once

#include "vod/rdma/handles.hpp"

namespace vod::server::cm {

class CmEndpoint {
 public:
  virtual ~CmEndpoint() = default;
  // An event of this endpoint's id (ESTABLISHED, DISCONNECTED, TIMEWAIT_EXIT, ...). An endpoint that
  // destroys the id (itself) acknowledges the event first (CmEvent::release), and touches neither
  // afterwards.
  virtual void on_cm_event(rdma::CmEvent& event) = 0;
};

}  // namespace vod::server::cm
