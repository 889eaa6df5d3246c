// SPDX-License-Identifier: LGPL-2.1-or-later
// The CM dispatcher's routes (cm/routes.hpp): an id's context holds a route number, never a
// pointer; numbers are never reused; a route let go of (a retired viewer, a failed connection)
// finds nothing, so a late event of its id is dropped rather than delivered to a stranger.
#include <gtest/gtest.h>

#include <vector>

#include "cm/routes.hpp"

namespace vod::server::cm {
namespace {

struct Recorder final : CmEndpoint {
  void on_cm_event(rdma::CmEvent&) override {}
};

TEST(CmRoutes, AnIdFindsItsOwnerUntilTheRouteGoes) {
  Routes routes;
  rdma_cm_id a{}, b{};
  Recorder ra, rb;
  EXPECT_EQ(routes.find(&a), nullptr) << "a new id (context 0) has no owner";
  {
    auto route_a = routes.add(&a, ra);
    auto route_b = routes.add(&b, rb);
    EXPECT_EQ(routes.find(&a), &ra);
    EXPECT_EQ(routes.find(&b), &rb);
    EXPECT_NE(route_a.number(), route_b.number());
    EXPECT_EQ(routes.size(), 2u);
    route_a.reset();  // retired: its id lives on while its QP drains
    EXPECT_EQ(routes.find(&a), nullptr);
    EXPECT_EQ(a.context, nullptr);
    EXPECT_EQ(routes.find(&b), &rb);
  }
  EXPECT_EQ(routes.size(), 0u) << "a route goes with its owner";
  EXPECT_EQ(routes.find(&b), nullptr);
}

TEST(CmRoutes, NumbersAreNeverReused) {
  Routes routes;
  rdma_cm_id id{};
  Recorder first, second;
  auto old = routes.add(&id, first);
  const void* stale = id.context;  // what a late event of the old connection would carry
  old.reset();
  auto now = routes.add(&id, second);  // the same id object (or address) for someone else
  EXPECT_NE(id.context, stale);
  rdma_cm_id late{};
  late.context = const_cast<void*>(stale);
  EXPECT_EQ(routes.find(&late), nullptr) << "the old number names nobody, not the new owner";
  EXPECT_EQ(routes.find(&id), &second);
}

TEST(CmRoutes, AMovedRouteKeepsItsEntryOnce) {
  Routes routes;
  rdma_cm_id id{};
  Recorder r;
  auto a = routes.add(&id, r);
  auto b = std::move(a);
  a.reset();  // moved from: nothing to let go of
  EXPECT_EQ(routes.find(&id), &r);
  std::vector<Routes::Route> held;
  held.push_back(std::move(b));
  held.clear();
  EXPECT_EQ(routes.find(&id), nullptr);
  EXPECT_EQ(routes.size(), 0u);
}

}  // namespace
}  // namespace vod::server::cm
