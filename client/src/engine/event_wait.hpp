// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's one sleep: on its fetcher's completion fds, the control fd (the rdma_cm
// channel: a disconnect must be noticed even while idle) and the interrupter, for at most `wait`
// or until the fetcher's next timer (UDP retransmission).
#pragma once

#include <chrono>

#include "vod/client/fetcher.hpp"
#include "vod/client/interrupter.hpp"

namespace vod::client::engine {

// Arms the fetcher first if it is not (then returns at once: completions may have landed before
// the arming, so the caller looks again first). Takes the completion channels' notifications and
// checks the control fd's events (Fetcher::check_events throws ConnectionLost on a disconnect).
// Throws Interrupted when `interrupter` is raised. False when nothing happened before the time ran out.
bool wait_for_events(Fetcher& fetcher, const Interrupter* interrupter, std::chrono::milliseconds wait);

}  // namespace vod::client::engine
