// SPDX-License-Identifier: LGPL-2.1-or-later
// A live session's watch of its member, in a fleet: as a movie session's (engine/liveness.hpp), the
// server's status words are read one-sided every probe_every, and the same decider says when to
// leave. A live viewer always waits for the server's process (its notifications, its publishing), so
// a heartbeat that stands still is a member to leave.
#pragma once

#include <chrono>

#include "engine/liveness.hpp"
#include "vod/client/live_session.hpp"

namespace vod::client {

struct LiveSession::Watch {
  engine::LivenessPolicy policy;
  engine::HeartbeatWatch heartbeat;
  bool probe_outstanding = false;
  std::chrono::steady_clock::time_point probe_posted, next_probe, last_completion;

  // A new connection: nothing seen yet, the first probe after probe_every.
  void restart(std::chrono::steady_clock::time_point now) {
    heartbeat = {};
    probe_outstanding = false;
    last_completion = now;
    next_probe = now + policy.probe_every;
  }
};

}  // namespace vod::client
