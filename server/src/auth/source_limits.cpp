// SPDX-License-Identifier: LGPL-2.1-or-later
#include "auth/source_limits.hpp"

#include <arpa/inet.h>

#include <algorithm>

namespace vod::server::auth {

bool SourceLimits::allow_connect(const proto::TokenAddress& source, Clock::time_point now) {
  if (settings_.connects_per_second <= 0) return true;
  auto it = sources_.find(source);
  if (it == sources_.end()) {
    make_room(now);
    const double burst = std::max(1.0, settings_.connect_burst);
    it = sources_.emplace(source, Source{udp::TokenBucket(settings_.connects_per_second, burst, now), 0}).first;
  }
  if (it->second.bucket.available(now) < 1) return false;
  it->second.bucket.take(1);
  return true;
}

unsigned SourceLimits::connections(const proto::TokenAddress& source) const {
  const auto it = sources_.find(source);
  return it == sources_.end() ? 0 : it->second.connections;
}

void SourceLimits::opened(const proto::TokenAddress& source) {
  auto it = sources_.find(source);
  if (it == sources_.end()) {
    make_room(Clock::now());
    const double burst = std::max(1.0, settings_.connect_burst);
    it = sources_.emplace(source, Source{udp::TokenBucket(settings_.connects_per_second, burst, Clock::now()), 0}).first;
  }
  ++it->second.connections;
}

void SourceLimits::closed(const proto::TokenAddress& source) {
  const auto it = sources_.find(source);
  if (it != sources_.end() && it->second.connections > 0) --it->second.connections;
}

void SourceLimits::make_room(Clock::time_point now) {
  if (sources_.size() < settings_.max_tracked) return;
  // Forget idle addresses: no connection, and a bucket refilled to its burst.
  const double burst = std::max(1.0, settings_.connect_burst);
  for (auto it = sources_.begin(); it != sources_.end();)
    it = it->second.connections == 0 && it->second.bucket.available(now) >= burst ? sources_.erase(it) : std::next(it);
  if (sources_.size() < settings_.max_tracked) return;
  // Still full (a flood from many addresses): forget those without connections, bucket state and all.
  std::erase_if(sources_, [](const auto& kv) { return kv.second.connections == 0; });
}

std::string address_text(const proto::TokenAddress& a) {
  char buf[INET6_ADDRSTRLEN] = "?";
  static constexpr std::uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  if (std::equal(std::begin(mapped), std::end(mapped), a.begin())) inet_ntop(AF_INET, a.data() + 12, buf, sizeof buf);
  else inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
  return buf;
}

}  // namespace vod::server::auth
