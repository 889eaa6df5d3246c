// SPDX-License-Identifier: LGPL-2.1-or-later
#include "engine/liveness.hpp"

#include <algorithm>

namespace vod::client::engine {

Judgement judge(const HeartbeatWatch& watch, const LivenessInputs& in, const LivenessPolicy& policy) {
  const auto deadline = dead_deadline(policy, in.smoothed_latency);
  if (in.outstanding && in.now - in.last_completion > deadline)
    return {Verdict::dead, "nothing completed for " + std::to_string(deadline.count()) + " ms: the member is unreachable"};
  if (in.waits_on_server && watch.still_for() >= policy.hung_after)
    return {Verdict::hung, "the member's heartbeat stood still for " + std::to_string(watch.still_for().count()) +
                               " ms while a read waited for it: its process no longer serves"};
  if (watch.draining) return {Verdict::draining, "the member is draining: moving to the next one before it stops"};
  return {};
}

}  // namespace vod::client::engine
