// SPDX-License-Identifier: LGPL-2.1-or-later
// What an accepted connection holds from the server's ledger: its place in its address's
// connection count (SourceLimits), the token it came with (for revocation), and the token's
// deadline. One owner, the connection object: whichever path ends the connection (a disconnect, a
// failed window bind, a failed accept, a revocation, the drain), the grant goes with it and gives
// everything back, so no path can leave a count up. The deadline is the connection's to keep: it
// arms a timer of its own with it (loop::Reactor::Timer), which goes with the connection too.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "auth/source_limits.hpp"
#include "vod/protocol/access_token.hpp"

namespace vod::server::auth {

class Grant {
 public:
  using Clock = std::chrono::steady_clock;
  struct Terms {
    proto::TokenAddress address{};
    std::optional<proto::AccessToken> token;
    std::string peer;  // "host:port", for log lines
  };

  Grant() noexcept = default;
  // Counts the connection against its address and, when its token expires, computes the deadline:
  // `now_unix` and `now` are the same instant on the wall clock and the steady clock.
  Grant(SourceLimits& limits, Terms terms, std::uint64_t now_unix, Clock::time_point now);
  Grant(Grant&& o) noexcept { take(o); }
  Grant& operator=(Grant&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Grant(const Grant&) = delete;
  Grant& operator=(const Grant&) = delete;
  ~Grant() { release(); }

  bool held() const noexcept { return limits_ != nullptr; }
  const Terms& terms() const noexcept { return terms_; }
  // When the token expires: none without a token, or once released.
  std::optional<Clock::time_point> deadline() const noexcept { return deadline_; }
  // Gives everything back now (the connection is draining, its object still around for a while).
  void release() noexcept;

 private:
  void take(Grant& o) noexcept;

  SourceLimits* limits_ = nullptr;
  Terms terms_;
  std::optional<Clock::time_point> deadline_;
};

}  // namespace vod::server::auth
