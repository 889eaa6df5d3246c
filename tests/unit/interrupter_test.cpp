// SPDX-License-Identifier: LGPL-2.1-or-later
// The interrupter makes its eventfd only when a reader first asks for it (an open makes no system
// call it does not need): a raise() from before that is carried over, so a poll() on the fd still
// wakes at once; clear() empties it; a raise() from another thread wakes a poll() already waiting.
#include <gtest/gtest.h>
#include <poll.h>

#include <chrono>
#include <thread>

#include "vod/client/interrupter.hpp"

namespace vod::client {
namespace {

bool readable(int fd, int wait_ms) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, wait_ms) == 1 && (p.revents & POLLIN);
}

TEST(Interrupter, ARaiseBeforeTheFdExistsStillWakesItsPoll) {
  Interrupter i;
  i.raise();
  EXPECT_TRUE(i.raised());
  const int fd = i.fd();
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(readable(fd, 0)) << "the raise before the fd was made was lost";
  EXPECT_EQ(i.fd(), fd) << "one fd for the interrupter's life";
  i.clear();
  EXPECT_FALSE(i.raised());
  EXPECT_FALSE(readable(fd, 0)) << "clear() left the fd readable";
}

TEST(Interrupter, AClearBeforeTheFdExistsLeavesItQuiet) {
  Interrupter i;
  i.raise();
  i.clear();
  EXPECT_FALSE(readable(i.fd(), 0));
}

TEST(Interrupter, ARaiseFromAnotherThreadWakesAWaitingPoll) {
  Interrupter i;
  const int fd = i.fd();
  ASSERT_FALSE(readable(fd, 0));
  std::thread raiser([&i] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    i.raise();
  });
  const bool woke = readable(fd, 10'000);
  raiser.join();
  EXPECT_TRUE(woke);
  EXPECT_TRUE(i.raised());
}

}  // namespace
}  // namespace vod::client
