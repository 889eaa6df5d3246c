// SPDX-License-Identifier: LGPL-2.1-or-later
#include "auth/source_limits.hpp"

#include <algorithm>

namespace vod::server::auth {

SourceLimits::Source& SourceLimits::source(const proto::TokenAddress& address, Clock::time_point now) {
  auto it = sources_.find(address);
  if (it == sources_.end()) {
    make_room(now);
    it = sources_.emplace(address, Source{udp::TokenBucket(settings_.connects_per_second, burst(), now), 0}).first;
  }
  return it->second;
}

bool SourceLimits::allow_connect(const proto::TokenAddress& address, Clock::time_point now) {
  if (settings_.connects_per_second <= 0) return true;
  Source& s = source(address, now);
  if (s.bucket.available(now) < 1) return false;
  s.bucket.take(1);
  return true;
}

unsigned SourceLimits::connections(const proto::TokenAddress& source) const {
  const auto it = sources_.find(source);
  return it == sources_.end() ? 0 : it->second.connections;
}

void SourceLimits::opened(const proto::TokenAddress& address) { ++source(address, Clock::now()).connections; }

void SourceLimits::closed(const proto::TokenAddress& source) {
  const auto it = sources_.find(source);
  if (it != sources_.end() && it->second.connections > 0) --it->second.connections;
}

void SourceLimits::make_room(Clock::time_point now) {
  if (sources_.size() < settings_.max_tracked) return;
  // Forget idle addresses: no connection, and a bucket refilled to its burst.
  for (auto it = sources_.begin(); it != sources_.end();)
    it = it->second.connections == 0 && it->second.bucket.available(now) >= burst() ? sources_.erase(it) : std::next(it);
  if (sources_.size() < settings_.max_tracked) return;
  // Still full (a flood from many addresses): forget those without connections, bucket state and all.
  std::erase_if(sources_, [](const auto& kv) { return kv.second.connections == 0; });
}

}  // namespace vod::server::auth
