// SPDX-License-Identifier: LGPL-2.1-or-later
// A client's one sleep: on completion fds, a control fd (the rdma_cm channel: a disconnect must be
// noticed even while idle) and the interrupter. poll_events is the sleep itself, which the read
// engine (wait_for_events, for at most `wait` or until the fetcher's next timer) and LiveSession
// both use.
#pragma once

#include <chrono>
#include <span>

#include "vod/client/fetcher.hpp"
#include "vod/client/interrupter.hpp"

namespace vod::client::engine {

struct EventsReady {
  bool any = false;          // something became readable before the time ran out
  bool completions = false;  // one of the completion fds (the caller consumes their notifications)
  bool control = false;      // the control fd
};

// Sleeps at most `ms` (-1: no limit) until one of `completion_fds` or `control_fd` is readable or
// `interrupter` is raised (throws Interrupted then). A negative fd is not watched.
EventsReady poll_events(std::span<const int> completion_fds, int control_fd, const Interrupter* interrupter, int ms);

// Arms the fetcher first if it is not (then returns at once: completions may have landed before
// the arming, so the caller looks again first). Takes the completion channels' notifications and
// checks the control fd's events (Fetcher::check_events throws ConnectionLost on a disconnect).
// Throws Interrupted when `interrupter` is raised. False when nothing happened before the time ran out.
bool wait_for_events(Fetcher& fetcher, const Interrupter* interrupter, std::chrono::milliseconds wait);

}  // namespace vod::client::engine
