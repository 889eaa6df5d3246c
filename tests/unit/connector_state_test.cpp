// SPDX-License-Identifier: LGPL-2.1-or-later
// The non-blocking connect's transitions (issue 30): every state against every event it may see.
#include <gtest/gtest.h>

#include "vod/rdma/connector.hpp"

namespace vod::rdma {
namespace {

using S = ConnectState;
using A = ConnectAction;

TEST(ConnectTransition, EachStepAdvancesOnlyOnItsOwnEvent) {
  struct Row {
    S state;
    rdma_cm_event_type event;
    S next;
    A action;
  };
  const Row rows[] = {
      {S::resolving_address, RDMA_CM_EVENT_ADDR_RESOLVED, S::resolving_route, A::resolve_route},
      {S::resolving_address, RDMA_CM_EVENT_ADDR_ERROR, S::failed, A::fail_event},
      {S::resolving_address, RDMA_CM_EVENT_ROUTE_RESOLVED, S::failed, A::fail_event},
      {S::resolving_address, RDMA_CM_EVENT_REJECTED, S::failed, A::fail_rejected},
      {S::resolving_route, RDMA_CM_EVENT_ROUTE_RESOLVED, S::connecting, A::create_qp_and_connect},
      {S::resolving_route, RDMA_CM_EVENT_ROUTE_ERROR, S::failed, A::fail_event},
      {S::resolving_route, RDMA_CM_EVENT_ADDR_RESOLVED, S::failed, A::fail_event},
      {S::connecting, RDMA_CM_EVENT_ESTABLISHED, S::established, A::take_accept},
      {S::connecting, RDMA_CM_EVENT_REJECTED, S::failed, A::fail_rejected},  // a reject, or nobody listens (status 8)
      {S::connecting, RDMA_CM_EVENT_UNREACHABLE, S::failed, A::fail_event},
      {S::connecting, RDMA_CM_EVENT_CONNECT_ERROR, S::failed, A::fail_event},
      {S::connecting, RDMA_CM_EVENT_DISCONNECTED, S::failed, A::fail_event},
      {S::connecting, RDMA_CM_EVENT_DEVICE_REMOVAL, S::failed, A::fail_event},
      {S::established, RDMA_CM_EVENT_DISCONNECTED, S::established, A::none},  // the endpoint's owner handles what follows
      {S::failed, RDMA_CM_EVENT_ESTABLISHED, S::failed, A::none},
  };
  for (const auto& r : rows) {
    SCOPED_TRACE(std::string(to_string(r.state)) + " + " + rdma_event_str(r.event));
    const ConnectStep step = connect_transition(r.state, r.event);
    EXPECT_EQ(step.next, r.next);
    EXPECT_EQ(step.action, r.action);
  }
}

}  // namespace
}  // namespace vod::rdma
