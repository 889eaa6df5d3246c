#include "vod/client/stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

namespace vod::client {

int LatencyHistogram::bucket(std::uint64_t v) noexcept {
  if (v < kSub) return static_cast<int>(v);
  const int log = 63 - std::countl_zero(v);                         // v in [2^log, 2^(log+1))
  const int sub = static_cast<int>((v >> (log - 3)) & (kSub - 1));  // next three bits
  return std::min((log - 2) * kSub + sub, kBuckets - 1);
}

std::uint64_t LatencyHistogram::upper_bound(int b) noexcept {
  if (b < kSub) return static_cast<std::uint64_t>(b);
  const int log = b / kSub + 2;
  const int sub = b % kSub;
  return ((std::uint64_t{kSub} + static_cast<std::uint64_t>(sub) + 1) << (log - 3)) - 1;
}

void LatencyHistogram::record(std::uint64_t micros) noexcept {
  ++counts_[static_cast<std::size_t>(bucket(micros))];
  ++count_;
  max_ = std::max(max_, micros);
}

void LatencyHistogram::merge(const LatencyHistogram& o) noexcept {
  for (std::size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  max_ = std::max(max_, o.max_);
}

std::uint64_t LatencyHistogram::percentile(double p) const noexcept {
  if (count_ == 0) return 0;
  const auto want = static_cast<std::uint64_t>(std::max(1.0, p * static_cast<double>(count_) + 0.5));
  std::uint64_t seen = 0;
  for (int b = 0; b < kBuckets; ++b) {
    seen += counts_[static_cast<std::size_t>(b)];
    if (seen >= want) return std::min(upper_bound(b), max_);
  }
  return max_;
}

std::uint64_t LatencySamples::percentile(double p) const {
  if (samples_.empty()) return 0;
  std::vector<std::uint64_t> sorted = samples_;
  const auto rank = static_cast<std::size_t>(std::ceil(std::clamp(p, 0.0, 1.0) * static_cast<double>(sorted.size())));
  const auto at = sorted.begin() + static_cast<std::ptrdiff_t>(std::max<std::size_t>(rank, 1) - 1);
  std::nth_element(sorted.begin(), at, sorted.end());
  return *at;
}

void Stats::merge(const Stats& o) noexcept {
  bytes_delivered += o.bytes_delivered;
  bytes_copied += o.bytes_copied;
  direct_reads += o.direct_reads;
  bytes_read += o.bytes_read;
  reads_posted += o.reads_posted;
  reads_completed += o.reads_completed;
  stale_discarded += o.stale_discarded;
  head_reads += o.head_reads;
  stalls += o.stalls;
  reconnects += o.reconnects;
  in_flight += o.in_flight;
  read_latency_us.merge(o.read_latency_us);
}

std::string Stats::summary() const {
  char buf[384];
  std::snprintf(buf, sizeof buf,
                "delivered %llu B (copied %llu B, %llu direct reads), read %llu B in %llu reads (%u in flight, %llu small first reads), "
                "%llu stale discarded, %llu stalls, "
                "%llu reconnects, read latency p50 %llu us p90 %llu us p99 %llu us max %llu us",
                static_cast<unsigned long long>(bytes_delivered), static_cast<unsigned long long>(bytes_copied),
                static_cast<unsigned long long>(direct_reads), static_cast<unsigned long long>(bytes_read),
                static_cast<unsigned long long>(reads_completed), in_flight, static_cast<unsigned long long>(head_reads),
                static_cast<unsigned long long>(stale_discarded), static_cast<unsigned long long>(stalls),
                static_cast<unsigned long long>(reconnects), static_cast<unsigned long long>(read_latency_us.percentile(0.5)),
                static_cast<unsigned long long>(read_latency_us.percentile(0.9)),
                static_cast<unsigned long long>(read_latency_us.percentile(0.99)), static_cast<unsigned long long>(read_latency_us.max()));
  return buf;
}

}  // namespace vod::client
