// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client bench --pattern live: N viewers of one live channel in one process (bench_command.cpp
// runs the movie patterns).
#include <poll.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "commands.hpp"
#include "vod/client/live_session.hpp"

namespace vod::client::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

}  // namespace

// --pattern live: N viewers of one live channel, all driven from this thread on one shared CQ.
// Reports the latency from the server's publish stamp to delivery (CLOCK_REALTIME on both; the
// benchmark runs them on one host), skips, and what was delivered.
int bench_live(const Uri& uri, unsigned clients, double duration, const CommonOptions& common, unsigned credits) {
  LiveOptions o;
  o.hub = std::make_shared<rdma::CompletionHub>();
  o.credits = credits;
  o.chunk_size = common.session.engine.chunk_size;
  o.read_depth = common.session.engine.read_depth;
  o.connect_timeout = common.session.connect_timeout;
  o.reconnect = common.session.reconnect;
  std::vector<std::unique_ptr<LiveSession>> viewers;
  const auto connect_start = Clock::now();
  for (unsigned i = 0; i < clients; ++i) viewers.push_back(std::make_unique<LiveSession>(uri, o));
  std::fprintf(stderr, "bench: %u live viewers of '%s' connected in %.2f s\n", clients, uri.movie->c_str(),
               seconds_between(connect_start, Clock::now()));
  std::vector<std::uint8_t> buffer(1u << 20);
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration));
  while (Clock::now() < end) {
    o.hub->arm();  // then drive: a completion after the drive still wakes the poll below
    bool any = false;
    for (auto& v : viewers)
      while (v->read(buffer, std::chrono::milliseconds(0)).bytes > 0) any = true;
    if (any) continue;
    std::vector<pollfd> fds;
    for (int fd : o.hub->fds()) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), 5) > 0) o.hub->consume();
  }
  const double elapsed = seconds_between(start, Clock::now());
  LatencyHistogram latency;
  std::uint64_t bytes = 0, skips = 0, notifications = 0, coalesced = 0, overwritten = 0;
  for (auto& v : viewers) {
    const auto& s = v->stats();
    latency.merge(s.latency_us);
    bytes += s.bytes_delivered;
    skips += s.cursor.skips;
    notifications += s.notifications;
    coalesced += s.coalesced;
    overwritten += s.cursor.overwritten;
  }
  std::printf(
      "bench: %u live viewers, %.1f s: %.2f Mbit/s delivered in all, %llu notifications (%llu coalesced), %llu skips, %llu overwritten "
      "reads\n",
      clients, elapsed, static_cast<double>(bytes) * 8 / elapsed / 1e6, static_cast<unsigned long long>(notifications),
      static_cast<unsigned long long>(coalesced), static_cast<unsigned long long>(skips), static_cast<unsigned long long>(overwritten));
  std::printf("  publish to delivery: p50 %llu us, p90 %llu us, p99 %llu us (%llu records)\n",
              static_cast<unsigned long long>(latency.percentile(0.5)), static_cast<unsigned long long>(latency.percentile(0.9)),
              static_cast<unsigned long long>(latency.percentile(0.99)), static_cast<unsigned long long>(latency.count()));
  std::printf(
      "BENCH live clients=%u seconds=%.3f bytes=%llu latency_p50_us=%llu latency_p99_us=%llu records=%llu skips=%llu coalesced=%llu\n",
      clients, elapsed, static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(latency.percentile(0.5)),
      static_cast<unsigned long long>(latency.percentile(0.99)), static_cast<unsigned long long>(latency.count()),
      static_cast<unsigned long long>(skips), static_cast<unsigned long long>(coalesced));
  return exit_ok;
}

}  // namespace vod::client::cli
