// SPDX-License-Identifier: LGPL-2.1-or-later
// What an accepted connection holds from the server's ledger: its place in its address's
// connection count (SourceLimits), the token it came with (for revocation), and the token's expiry
// as an entry in the server's ExpiryQueue. One owner, the connection object: whichever path ends the
// connection (a disconnect, a failed window bind, a failed accept, a revocation, the drain), the
// grant goes with it and gives everything back, so no path can leave a count up or an entry that
// names a destroyed rdma_cm_id.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "auth/source_limits.hpp"
#include "vod/protocol/access_token.hpp"

struct rdma_cm_id;

namespace vod::server::auth {

// The deadlines of the connections whose tokens expire, soonest first. The server's loop sleeps no
// longer than next(), and cuts off what take_due() returns, as it does a revoked connection.
class ExpiryQueue {
 public:
  using Clock = std::chrono::steady_clock;
  void add(Clock::time_point at, rdma_cm_id* id) { entries_.emplace(at, id); }
  void remove(Clock::time_point at, rdma_cm_id* id) noexcept { entries_.erase({at, id}); }
  std::optional<Clock::time_point> next() const {
    return entries_.empty() ? std::nullopt : std::optional<Clock::time_point>(entries_.begin()->first);
  }
  // The connections whose deadline is at or before `now`, taken off the queue.
  std::vector<rdma_cm_id*> take_due(Clock::time_point now);
  std::size_t size() const noexcept { return entries_.size(); }

 private:
  std::set<std::pair<Clock::time_point, rdma_cm_id*>> entries_;
};

class Grant {
 public:
  using Clock = std::chrono::steady_clock;
  struct Terms {
    proto::TokenAddress address{};
    std::optional<proto::AccessToken> token;
    std::string peer;  // "host:port", for log lines
  };

  Grant() noexcept = default;
  // Counts the connection against its address and, when its token expires, queues the deadline:
  // `now_unix` and `now` are the same instant on the wall clock and the steady clock.
  Grant(SourceLimits& limits, ExpiryQueue& expiries, rdma_cm_id* id, Terms terms, std::uint64_t now_unix, Clock::time_point now);
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
  std::optional<Clock::time_point> deadline() const noexcept { return deadline_; }
  // Gives everything back now (the connection is draining, its object still around for a while).
  void release() noexcept;

 private:
  void take(Grant& o) noexcept;

  SourceLimits* limits_ = nullptr;
  ExpiryQueue* expiries_ = nullptr;
  rdma_cm_id* id_ = nullptr;
  Terms terms_;
  std::optional<Clock::time_point> deadline_;
};

}  // namespace vod::server::auth
