// What a client did: bytes, reads, stalls and read latency, for vod-client and the benchmarks.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace vod::client {

// Read latencies in microseconds, in logarithmic buckets (8 per power of two, so a percentile is
// within ~9% of the true value) without storing samples.
class LatencyHistogram {
 public:
  void record(std::uint64_t micros) noexcept;
  void merge(const LatencyHistogram& other) noexcept;
  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t max() const noexcept { return max_; }
  // The smallest bucket bound below which at least p (0..1) of the samples fall; 0 when empty.
  std::uint64_t percentile(double p) const noexcept;

 private:
  static constexpr int kSub = 8;
  static constexpr int kBuckets = 64 * kSub;
  static int bucket(std::uint64_t v) noexcept;
  static std::uint64_t upper_bound(int bucket) noexcept;
  std::array<std::uint64_t, kBuckets> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t max_ = 0;
};

// Every sample kept, for exact percentiles: for the few hundred timings of a benchmark's seeks and
// starts, where LatencyHistogram's buckets (an eighth of an octave, about 12%) are too coarse to
// set a few hundred microseconds beside ib_read_lat's figure. One word per sample: not for a
// per-Read figure of a long run.
class LatencySamples {
 public:
  void record(std::uint64_t micros) { samples_.push_back(micros); }
  void merge(const LatencySamples& other) { samples_.insert(samples_.end(), other.samples_.begin(), other.samples_.end()); }
  std::uint64_t count() const noexcept { return samples_.size(); }
  // The sample at rank ceil(p * count) (nearest rank, 1-based); 0 when empty.
  std::uint64_t percentile(double p) const;

 private:
  std::vector<std::uint64_t> samples_;
};

struct Stats {
  std::uint64_t bytes_delivered = 0;  // to the caller
  std::uint64_t bytes_copied = 0;     // of those, copied out of the ring (the rest landed straight in the caller's buffer)
  std::uint64_t direct_reads = 0;     // Reads straight into a caller's registered buffer (zero copy)
  std::uint64_t bytes_read = 0;       // by RDMA Read (prefetch included)
  std::uint64_t reads_posted = 0;
  std::uint64_t reads_completed = 0;
  std::uint64_t stale_discarded = 0;  // completions from before a seek or switch, dropped unseen
  std::uint64_t head_reads = 0;       // small first Reads after a start or seek (ramp-up)
  std::uint64_t stalls = 0;           // times a caller had to wait for data that was not there yet
  std::uint64_t reconnects = 0;
  std::uint32_t in_flight = 0;
  LatencyHistogram read_latency_us;  // post to completion, per RDMA Read

  void merge(const Stats& o) noexcept;
  std::string summary() const;  // one line: bytes, reads, stalls, latency p50/p90/p99
};

}  // namespace vod::client
