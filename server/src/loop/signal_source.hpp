// SPDX-License-Identifier: LGPL-2.1-or-later
// Signals as one more fd of the event loop: the signals named are blocked (sigprocmask) and
// delivered through a signalfd registered with the Reactor, so the loop sleeps in one epoll_wait
// for sockets, completions, deadlines and signals alike.
//
// Make it before any thread that must not take these signals: a thread inherits the blocked mask
// of the thread that creates it (the metrics endpoint's, the live sources').
#pragma once

#include <functional>
#include <initializer_list>

#include "loop/reactor.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::loop {

class SignalSource {
 public:
  // Blocks `signals` and calls `on_signal(signo)` for each one that arrives, in the loop's thread.
  // Throws std::runtime_error naming sigprocmask or signalfd and errno.
  SignalSource(Reactor& reactor, std::initializer_list<int> signals, std::function<void(int)> on_signal);
  SignalSource(const SignalSource&) = delete;
  SignalSource& operator=(const SignalSource&) = delete;

 private:
  void on_readable();

  std::function<void(int)> on_signal_;
  UniqueFd fd_;                    // the signalfd
  Reactor::Registration in_loop_;  // after the fd: removed from the loop before it is closed
};

}  // namespace vod::server::loop
