// SPDX-License-Identifier: LGPL-2.1-or-later
// cm::DrainingConnections, the one holder of connections whose QPs drain (both transports use it):
// a connection goes when its count of outstanding work reaches 0, is looked at again on a timer
// while it does not, and goes anyway when forced (at exit). The QP side, QpDrain::begin, runs on
// real devices in the Soft-RoCE guest (rdma_vod_cache, rdma_live_*: every drain there is counted).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "cm/draining.hpp"
#include "loop/reactor.hpp"

namespace vod::server::cm {
namespace {

struct FakeConnection {
  FakeConnection(int* counter, std::uint64_t work) : destroyed(counter), outstanding(work) {}
  ~FakeConnection() { ++*destroyed; }
  bool drained() const noexcept { return outstanding == 0; }
  QpDrain::Clock::time_point drain_began() const noexcept { return began; }
  const std::string& peer() const noexcept { return name; }
  int* destroyed;
  std::uint64_t outstanding;
  QpDrain::Clock::time_point began = QpDrain::Clock::now();
  std::string name = "192.0.2.1";
};

TEST(DrainingConnections, AConnectionGoesWhenItsWorkHasFlushedAndNotBefore) {
  loop::Reactor reactor;
  int polls = 0, destroyed = 0;
  DrainingConnections<FakeConnection> draining(reactor, "test", [&] { ++polls; });
  auto first = std::make_unique<FakeConnection>(&destroyed, 0);
  draining.add(std::move(first));  // nothing outstanding: it goes at once
  EXPECT_EQ(destroyed, 1);
  EXPECT_EQ(polls, 1);  // the CQ is polled before the counts are read
  auto second = std::make_unique<FakeConnection>(&destroyed, 2);
  FakeConnection* raw = second.get();
  draining.add(std::move(second));
  EXPECT_EQ(draining.size(), 1u);
  raw->outstanding = 0;  // its last flush arrived
  // The holder looks again on its own timer (kReapEvery), without being asked.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!draining.empty() && std::chrono::steady_clock::now() < until) reactor.run_once();
  EXPECT_TRUE(draining.empty());
  EXPECT_EQ(destroyed, 2);
}

TEST(DrainingConnections, OneThatNeverFlushesGoesAfterTheLimitOrWhenForced) {
  loop::Reactor reactor;
  int destroyed = 0;
  DrainingConnections<FakeConnection> draining(reactor, "test");
  auto stuck = std::make_unique<FakeConnection>(&destroyed, 1);
  stuck->began -= DrainingConnections<FakeConnection>::kDrainLimit + std::chrono::seconds(1);
  draining.add(std::move(stuck));
  EXPECT_EQ(destroyed, 1);  // past the limit: destroyed anyway
  draining.add(std::make_unique<FakeConnection>(&destroyed, 1));
  draining.reap();
  EXPECT_EQ(draining.size(), 1u);
  draining.reap(true);
  EXPECT_EQ(destroyed, 2);
}

TEST(QpDrain, DrainedOnlyOnceBegunAndNothingIsOutstanding) {
  QpDrain d;
  EXPECT_FALSE(d.begun());
  EXPECT_FALSE(d.drained(0));  // a QP not in the error state may still complete work
}

}  // namespace
}  // namespace vod::server::cm
