// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/reconnect.hpp"

#include <poll.h>

#include <algorithm>
#include <ctime>

namespace vod::client {

Backoff::Backoff(const ReconnectPolicy& policy, Clock::time_point lost_at) noexcept
    : policy_(policy), give_up_at_(lost_at + policy.give_up_after), next_(lost_at + policy.first), wait_(policy.first) {}

bool Backoff::failed(Clock::time_point now) noexcept {
  ++failed_;
  // The wait that came before this attempt decides, as it always has: another one like it, from
  // now, would run past the limit.
  if (now + wait_ > give_up_at_) return false;
  wait_ = std::min(wait_ * 2, policy_.max);
  next_ = now + wait_;
  return true;
}

bool retryable(const ClientError& e) noexcept { return e.kind() == ErrorKind::server_unreachable || e.kind() == ErrorKind::rejected; }

void refuse_expired_token(const Uri& uri) {
  if (auto expired = expired_token(uri, static_cast<std::uint64_t>(std::time(nullptr))))
    throw ClientError(ErrorKind::unauthorized, *expired);
}

void wait_until(Backoff::Clock::time_point deadline, const Interrupter& interrupter) {
  for (;;) {
    if (interrupter.raised()) throw Interrupted();
    const auto now = Backoff::Clock::now();
    if (now >= deadline) return;
    // Rounded up: never wakes before the deadline, so one poll() is the whole wait.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(deadline - now).count();
    pollfd p{interrupter.fd(), POLLIN, 0};
    poll(&p, 1, static_cast<int>(std::min<long long>(ms, 60'000)));
  }
}

RetryResult retry_on_schedule(const ReconnectPolicy& policy, bool first_at_once, const Interrupter& interrupter,
                              const std::function<void()>& attempt, const std::function<void()>& after_failure) {
  Backoff backoff(policy, Backoff::Clock::now());
  RetryResult r;
  for (;;) {
    if (first_at_once && backoff.failed_attempts() == 0) {
      if (interrupter.raised()) throw Interrupted();
    } else {
      wait_until(backoff.next_attempt(), interrupter);
    }
    try {
      attempt();
      r.succeeded = true;
      r.failed_attempts = backoff.failed_attempts();
      return r;
    } catch (const ConnectionLost& e) {
      r.last_failure = e.what();
    } catch (const ClientError& e) {
      if (!retryable(e)) throw;
      r.last_failure = e.what();
    }
    after_failure();
    if (!backoff.failed(Backoff::Clock::now())) {
      r.failed_attempts = backoff.failed_attempts();
      return r;
    }
  }
}

unsigned reconnect_on_schedule(const ReconnectPolicy& policy, const Interrupter& interrupter, const std::string& server,
                               const std::string& why, const std::function<void()>& attempt, const std::function<void()>& after_failure) {
  const RetryResult r = retry_on_schedule(policy, false, interrupter, attempt, after_failure);
  if (r.succeeded) return r.failed_attempts;
  throw ClientError(ErrorKind::connection_lost, "lost the connection to " + server + " and could not reconnect within " +
                                                    std::to_string(policy.give_up_after.count() / 1000) +
                                                    " s: " + (r.last_failure.empty() ? why : r.last_failure));
}

}  // namespace vod::client
