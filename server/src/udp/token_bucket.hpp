// SPDX-License-Identifier: LGPL-2.1-or-later
// A token bucket in bytes: `rate` bytes per second, at most `burst` saved up. The pacer's one
// primitive: per client (the rate it asked for, capped) and for the whole server (--udp-max-rate).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace vod::server::udp {

class TokenBucket {
 public:
  using Clock = std::chrono::steady_clock;

  TokenBucket() = default;  // no rate: nothing until set_rate
  TokenBucket(double bytes_per_second, double burst_bytes, Clock::time_point now)
      : rate_(bytes_per_second), burst_(burst_bytes), tokens_(burst_bytes), last_(now) {}

  // A full burst now (a client whose queue was empty starts its next record at once).
  void fill() noexcept { tokens_ = burst_; }
  void set_rate(double bytes_per_second, double burst_bytes) {
    rate_ = bytes_per_second;
    burst_ = burst_bytes;
    tokens_ = std::min(tokens_, burst_);
  }
  // Bytes that may be sent now.
  double available(Clock::time_point now) {
    refill(now);
    return tokens_;
  }
  void take(double bytes) { tokens_ -= bytes; }
  // When `bytes` will be available (now if they are); a full bucket, when more than it holds.
  Clock::time_point when(double bytes, Clock::time_point now) {
    refill(now);
    bytes = std::min(bytes, burst_);
    if (tokens_ >= bytes || rate_ <= 0) return now;
    return now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>((bytes - tokens_) / rate_));
  }
  double rate() const noexcept { return rate_; }
  double burst() const noexcept { return burst_; }

 private:
  void refill(Clock::time_point now) {
    if (now > last_) tokens_ = std::min(burst_, tokens_ + rate_ * std::chrono::duration<double>(now - last_).count());
    last_ = std::max(last_, now);
  }
  double rate_ = 0, burst_ = 0, tokens_ = 0;
  Clock::time_point last_{};
};

}  // namespace vod::server::udp
