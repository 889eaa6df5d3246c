// SPDX-License-Identifier: LGPL-2.1-or-later
// Limits per client address against abuse: connect requests per second (a token bucket per
// address) and connections at once. The global --max-clients stays as it is. Each refusal has its
// own reject code (rate_limited, source_limit; server_full for the global limit), never a silent
// drop. Memory is bounded: at most `max_tracked` addresses are remembered, and addresses with a
// full bucket and no connection are forgotten first.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <map>

#include "auth/client_address.hpp"
#include "udp/token_bucket.hpp"
#include "vod/protocol/access_token.hpp"

namespace vod::server::auth {

struct SourceLimitSettings {
  double connects_per_second = 0;  // per address; 0: no limit
  double connect_burst = 0;        // connects an idle address may make at once (at least 1)
  unsigned max_connections = 0;    // per address at once; 0: no limit
  std::size_t max_tracked = 4096;
};

class SourceLimits {
 public:
  using Clock = std::chrono::steady_clock;
  explicit SourceLimits(SourceLimitSettings s) : settings_(s) {}

  // A connect request from `source` at `now`: true when its rate allows it (and it is counted).
  bool allow_connect(const proto::TokenAddress& source, Clock::time_point now);
  unsigned connections(const proto::TokenAddress& source) const;
  void opened(const proto::TokenAddress& source);
  void closed(const proto::TokenAddress& source);
  const SourceLimitSettings& settings() const noexcept { return settings_; }
  std::size_t tracked() const noexcept { return sources_.size(); }

 private:
  struct Source {
    udp::TokenBucket bucket;
    unsigned connections = 0;
  };
  Source& source(const proto::TokenAddress& address, Clock::time_point now);  // found, or added
  void make_room(Clock::time_point now);
  double burst() const noexcept { return std::max(1.0, settings_.connect_burst); }

  SourceLimitSettings settings_;
  std::map<proto::TokenAddress, Source> sources_;
};

}  // namespace vod::server::auth
