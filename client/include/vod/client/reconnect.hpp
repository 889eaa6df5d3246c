// SPDX-License-Identifier: LGPL-2.1-or-later
// How a session comes back after its connection breaks: one policy for Session and LiveSession.
//
// The schedule is exponential backoff. The first attempt starts `first` after the loss; after each
// failed attempt the wait doubles, up to `max`, and the next attempt starts that long after the
// failure. The session gives up when an attempt fails and the wait that preceded it, counted from
// the failure, would end past `give_up_after` from the loss. So 0 s means one attempt. With the
// defaults (100 ms doubling to 2 s, for 30 s) attempts start 0.1, 0.3, 0.7, 1.5, 3.1, 5.1, ... s
// after the loss when each fails at once (tests/unit/backoff_test.cpp holds the whole table).
//
// Backoff is the schedule alone: it never reads a clock and never sleeps; its caller passes the
// times in and waits (wait_until) or, later, arms a timer. What is worth retrying (retryable) and
// what is not (an expired token: refuse_expired_token) is decided here too, once for both sessions.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "vod/client/errors.hpp"
#include "vod/client/interrupter.hpp"
#include "vod/client/uri.hpp"
#include "vod/defaults.hpp"

namespace vod::client {

struct ReconnectPolicy {
  std::chrono::milliseconds give_up_after = defaults::kReconnectFor;  // from the loss, in all; 0: one attempt
  std::chrono::milliseconds first = defaults::kBackoffFirst;          // the wait before the first attempt
  std::chrono::milliseconds max = defaults::kBackoffMax;              // the wait doubles up to this
  // False: the session does not reconnect by itself; a lost connection is reported at once as
  // ClientError(connection_lost), and its owner reconnects (vod-proxy does, off its event loop,
  // by opening a new session with this policy on a worker thread).
  bool in_place = true;
};

class Backoff {
 public:
  using Clock = std::chrono::steady_clock;

  // The connection was lost at `lost_at`: the first attempt is due policy.first after it.
  Backoff(const ReconnectPolicy& policy, Clock::time_point lost_at) noexcept;

  // When the next attempt may start.
  Clock::time_point next_attempt() const noexcept { return next_; }
  // An attempt failed at `now`. True: try again at next_attempt(). False: give up, the policy's
  // time is spent.
  bool failed(Clock::time_point now) noexcept;
  // The attempts that failed so far.
  unsigned failed_attempts() const noexcept { return failed_; }
  // The wait before the next attempt.
  std::chrono::milliseconds wait() const noexcept { return wait_; }

 private:
  ReconnectPolicy policy_;
  Clock::time_point give_up_at_;
  Clock::time_point next_;
  std::chrono::milliseconds wait_;
  unsigned failed_ = 0;
};

// Whether a failed reconnect attempt is worth another: nothing listened or answered
// (server_unreachable), or the server refused for a passing reason (rejected: full, shutting
// down). Everything else would fail the same way again: a token that is not accepted, an unknown
// movie, a movie of another size, a protocol error, no device. (A ConnectionLost exception, a
// connection that broke while it was being set up, is retried by the sessions too.)
bool retryable(const ClientError& e) noexcept;

// Throws ClientError(unauthorized) when the URI's access token has expired: the server ends a
// connection when its token expires, and a new connect with it would only be refused. Both
// sessions call it before they try to reconnect.
void refuse_expired_token(const Uri& uri);

// Sleeps until `deadline`, or throws Interrupted as soon as `interrupter` is raised (before the
// sleep too).
void wait_until(Backoff::Clock::time_point deadline, const Interrupter& interrupter);

// The one retry loop (the sessions' reconnects, vod-proxy's opener): runs `attempt` at each time
// of `policy`'s schedule (wait_until), the first at once when `first_at_once` (an open, not a
// reconnect), until one succeeds or the schedule is spent. A ConnectionLost or a retryable
// ClientError is a failed attempt (`after_failure` then drops what it left); any other error, and
// Interrupted, is thrown as it is.
struct RetryResult {
  bool succeeded = false;
  unsigned failed_attempts = 0;  // before the one that succeeded, or in all
  std::string last_failure;      // what the last failed attempt said
};
RetryResult retry_on_schedule(const ReconnectPolicy& policy, bool first_at_once, const Interrupter& interrupter,
                              const std::function<void()>& attempt, const std::function<void()>& after_failure);

// The one reconnect loop of both sessions, for a connection to `server` lost just now because of
// `why`: waits for each attempt's time on `policy`'s schedule (wait_until), runs `attempt`, and
// returns once one succeeds, with the number of attempts that failed before it. A ConnectionLost
// or a retryable ClientError is a failed attempt (`after_failure` then drops what it left); any
// other error is thrown as it is; when the schedule is spent it throws ClientError(connection_lost)
// naming `server` and the last failure.
unsigned reconnect_on_schedule(const ReconnectPolicy& policy, const Interrupter& interrupter, const std::string& server,
                               const std::string& why, const std::function<void()>& attempt, const std::function<void()>& after_failure);

}  // namespace vod::client
