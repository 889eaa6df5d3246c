// SPDX-License-Identifier: LGPL-2.1-or-later
// Whether the member a session in a fleet reads from still serves it: the decider behind failover
// in under two seconds (docs/client.md, "Failover"). A pure function of what the session saw, with
// the table test `Liveness`.
//
// - dead: nothing completed for the deadline while something was outstanding. The deadline is
//   `dead_after`, or `latency_factor` times the smoothed Read latency when that is longer (a slow or
//   shaped link is slow, not dead). RC's own retries give up only after 10-20 s.
// - hung: the server's heartbeat (its status words, read one-sided every `probe_every`) did not move
//   for `hung_after`, and the session waits for something only the server's process answers (a
//   segment fault, a Write-Record range). A pinned movie that still reads is not abandoned: the NIC
//   answers its Reads whether the process runs or not.
// - draining: the server says it is about to stop; move on now, while it still serves.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "vod/protocol/catalog_layout.hpp"

namespace vod::client::engine {

using LivenessClock = std::chrono::steady_clock;

struct LivenessPolicy {
  std::chrono::milliseconds probe_every{250};
  std::chrono::milliseconds hung_after{1000};
  std::chrono::milliseconds dead_after{1000};
  unsigned latency_factor = 4;
};

// What the probes of the status words saw.
struct HeartbeatWatch {
  std::optional<std::uint32_t> value;  // the heartbeat last read
  LivenessClock::time_point changed;   // when the probe that first read `value` completed
  LivenessClock::time_point same_at;   // when the last probe that read `value` again was posted
  bool draining = false;

  // A probe posted at `posted` completed at `completed` with `s`. The heartbeat stood still at least
  // from `changed` to `same_at`: the first probe read it no earlier than it completed, the last no
  // later than it was posted.
  void observe(const proto::ServerStatus& s, LivenessClock::time_point posted, LivenessClock::time_point completed) noexcept {
    draining = s.draining;
    if (!value || *value != s.heartbeat) {
      value = s.heartbeat;
      changed = same_at = completed;
    } else {
      same_at = posted;
    }
  }
  // The bytes a probe read: observed, or why they do not decode (a server newer than this client:
  // its status is not understood, and the caller stops watching it rather than guess).
  std::optional<std::string> observe_probe(proto::Bytes bytes, LivenessClock::time_point posted, LivenessClock::time_point completed) {
    const auto status = proto::decode_server_status(bytes);
    if (!status) return status.error().message;
    observe(*status, posted, completed);
    return std::nullopt;
  }
  // 0 is a server without status words: it never looks hung.
  std::chrono::milliseconds still_for() const noexcept {
    if (!value || *value == 0 || same_at <= changed) return std::chrono::milliseconds(0);
    return std::chrono::duration_cast<std::chrono::milliseconds>(same_at - changed);
  }
};

struct LivenessInputs {
  LivenessClock::time_point now;
  bool outstanding = false;                   // a Read or a probe posted and not completed
  LivenessClock::time_point last_completion;  // or the first post after an idle spell
  std::chrono::microseconds smoothed_latency{0};
  bool waits_on_server = false;  // a segment fault or a Write-Record range is outstanding
};

enum class Verdict { alive, dead, hung, draining };

struct Judgement {
  Verdict verdict = Verdict::alive;
  std::string why;
};

// The deadline for "nothing completed" under `policy` at this latency.
inline std::chrono::milliseconds dead_deadline(const LivenessPolicy& policy, std::chrono::microseconds smoothed_latency) noexcept {
  const auto scaled = std::chrono::duration_cast<std::chrono::milliseconds>(smoothed_latency * policy.latency_factor);
  return std::max(policy.dead_after, scaled);
}

Judgement judge(const HeartbeatWatch& watch, const LivenessInputs& in, const LivenessPolicy& policy);

}  // namespace vod::client::engine
