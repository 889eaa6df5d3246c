// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's event loop on pipes and eventfds (no device): level-triggered handlers, removal
// during a batch, a registration dropped by its own handler, timers in order and never early,
// cancellation, and what runs after a turn.
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <vector>

#include "loop/reactor.hpp"
#include "loop/signal_source.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::loop {
namespace {

using namespace std::chrono_literals;
using Clock = Reactor::Clock;

UniqueFd ready_eventfd() {
  UniqueFd fd(eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK));  // readable from the start
  EXPECT_TRUE(fd);
  return fd;
}

void drain(int fd) {
  std::uint64_t v = 0;
  (void)!read(fd, &v, sizeof v);
}

TEST(Reactor, LevelTriggeredUntilTheHandlerReads) {
  Reactor r;
  const UniqueFd fd = ready_eventfd();
  int calls = 0;
  auto reg = r.add(fd.get(), [&] { ++calls; });
  r.run_once(0ms);
  r.run_once(0ms);
  EXPECT_EQ(calls, 2) << "not read: ready again";
}

TEST(Reactor, AnFdIsRegisteredOnceAndGoesWithItsRegistration) {
  Reactor r;
  const UniqueFd fd = ready_eventfd();
  int calls = 0;
  {
    auto reg = r.add(fd.get(), [&] {
      drain(fd.get());
      ++calls;
    });
    EXPECT_THROW((void)r.add(fd.get(), [] {}), std::runtime_error);
    EXPECT_EQ(r.registrations(), 1u);
    r.run_once(0ms);
  }
  EXPECT_EQ(r.registrations(), 0u);
  eventfd_write(fd.get(), 1);
  r.run_once(0ms);
  EXPECT_EQ(calls, 1) << "removed: not called again";
  auto again = r.add(fd.get(), [&] { ++calls; });  // the fd may be registered again after that
  r.run_once(0ms);
  EXPECT_EQ(calls, 2);
}

TEST(Reactor, AHandlerThatRemovesAnotherReadyOneInTheSameBatchStopsIt) {
  Reactor r;
  const UniqueFd a = ready_eventfd(), b = ready_eventfd();
  std::vector<std::string> ran;
  Reactor::Registration ra, rb;
  // Whichever runs first removes the other: exactly one runs in this turn.
  ra = r.add(a.get(), [&] {
    ran.push_back("a");
    rb.reset();
  });
  rb = r.add(b.get(), [&] {
    ran.push_back("b");
    ra.reset();
  });
  EXPECT_EQ(r.run_once(0ms), 1u);
  EXPECT_EQ(ran.size(), 1u);
}

TEST(Reactor, AHandlerMayDropItsOwnRegistration) {
  Reactor r;
  const UniqueFd fd = ready_eventfd();
  int calls = 0;
  Reactor::Registration reg;
  reg = r.add(fd.get(), [&] {
    ++calls;
    reg.reset();  // its std::function is destroyed here; the call must still finish safely
  });
  r.run_once(0ms);
  r.run_once(0ms);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(r.registrations(), 0u);
}

TEST(Reactor, TimersFireInOrderAndNeverEarly) {
  Reactor r;
  const auto start = Clock::now();
  std::vector<int> order;
  std::vector<Clock::duration> at;
  auto t3 = r.at(start + 30ms, [&] {
    order.push_back(3);
    at.push_back(Clock::now() - start);
  });
  auto t1 = r.at(start + 10ms, [&] {
    order.push_back(1);
    at.push_back(Clock::now() - start);
  });
  auto t2 = r.at(start + 20ms, [&] {
    order.push_back(2);
    at.push_back(Clock::now() - start);
  });
  EXPECT_TRUE(t1.armed());
  while (order.size() < 3 && Clock::now() - start < 2s) r.run_once();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
  ASSERT_EQ(at.size(), 3u);
  EXPECT_GE(at[0], 10ms);
  EXPECT_GE(at[1], 20ms);
  EXPECT_GE(at[2], 30ms);
  EXPECT_FALSE(t1.armed()) << "fired: not armed any more";
  EXPECT_EQ(r.timers(), 0u);
}

TEST(Reactor, ACancelledOrDroppedTimerNeverFires) {
  Reactor r;
  int fired = 0;
  auto kept = r.at(Clock::now() + 5ms, [&] { fired += 1; });
  auto cancelled = r.at(Clock::now() + 5ms, [&] { fired += 10; });
  {
    auto dropped = r.at(Clock::now() + 5ms, [&] { fired += 100; });
  }
  cancelled.cancel();
  EXPECT_FALSE(cancelled.armed());
  // A timer cancelled by another timer of the same turn does not run either.
  Reactor::Timer victim;
  auto killer = r.at(Clock::now() + 6ms, [&] { victim.cancel(); });
  victim = r.at(Clock::now() + 6ms, [&] { fired += 1000; });
  const auto end = Clock::now() + 100ms;
  while (Clock::now() < end && r.timers() > 0) r.run_once(50ms);
  EXPECT_TRUE(fired == 1 || fired == 1001) << fired;  // the victim runs only if it came first in the turn
  EXPECT_EQ(r.timers(), 0u);
}

TEST(Reactor, WaitsNoLongerThanItsNextTimerOrItsLimit) {
  Reactor r;
  const auto start = Clock::now();
  EXPECT_EQ(r.run_once(20ms), 0u);
  EXPECT_GE(Clock::now() - start, 20ms);
  EXPECT_LT(Clock::now() - start, 1s);
  bool fired = false;
  auto t = r.at(Clock::now() + 15ms, [&] { fired = true; });
  const auto before = Clock::now();
  r.run_once();  // no limit: the timer bounds the wait
  EXPECT_TRUE(fired);
  EXPECT_LT(Clock::now() - before, 1s);
}

TEST(Reactor, AfterTurnRunsOnlyWhenSomethingRan) {
  Reactor r;
  int turns = 0;
  r.after_turn([&] { ++turns; });
  r.run_once(0ms);
  EXPECT_EQ(turns, 0);
  const UniqueFd fd = ready_eventfd();
  auto reg = r.add(fd.get(), [&] { drain(fd.get()); });
  r.run_once(0ms);
  EXPECT_EQ(turns, 1);
}

TEST(SignalSource, ASignalIsOneMoreHandlerOfTheLoop) {
  Reactor r;
  std::vector<int> got;
  SignalSource signals(r, {SIGHUP, SIGUSR2}, [&](int signo) { got.push_back(signo); });
  EXPECT_EQ(r.registrations(), 1u);
  ASSERT_EQ(raise(SIGHUP), 0);  // blocked: pending for this thread until the signalfd takes it
  ASSERT_EQ(raise(SIGUSR2), 0);
  const auto end = Clock::now() + 1s;
  while (Clock::now() < end && got.size() < 2) r.run_once(50ms);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], SIGHUP);  // standard signals are taken lowest number first
  EXPECT_EQ(got[1], SIGUSR2);
  EXPECT_EQ(r.run_once(0ms), 0u) << "each signal is handled once";
}

}  // namespace
}  // namespace vod::server::loop
