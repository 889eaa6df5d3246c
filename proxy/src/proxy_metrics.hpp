// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy's Prometheus metrics at /metrics, on its own HTTP listener (127.0.0.1 by default): the
// responses by status and their bytes, the HTTP connections open, refused at --max-connections and
// closed by a timeout, the live channels' shared sessions, viewers and skips, and from the RDMA side
// the sessions open, RDMA Reads, bytes read and reconnects. Everything runs on the proxy's one io
// thread, so the counters need no lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "request_router.hpp"
#include "vod/client/buffer_pool.hpp"
#include "vod/client/stats.hpp"

namespace vod::proxy {

struct RdmaFigures {
  std::size_t sessions = 0;             // movie sessions open now
  client::Stats totals;                 // summed over every session since the start, closed ones included
  bool catalog_ok = false;              // the last catalog read succeeded
  client::BufferPool::Figures buffers;  // the body blocks' registered buffers (zero copy)
  std::size_t buffer_bytes = 0;         // each
};

// The pages' pictures (ThumbnailService).
struct ThumbnailFigures {
  std::uint64_t made = 0, placeholders = 0, cache_hits = 0;
};

class ProxyMetrics {
 public:
  ProxyMetrics();
  void connection_opened() noexcept { ++connections_; }
  void connection_closed() noexcept { --connections_; }
  // A connection accepted at --max-connections and answered 503 at once.
  void connection_refused() noexcept { ++refused_; }
  // A connection closed because no request came within --idle-timeout (or, new, --header-timeout),
  // or because its request header did not arrive whole within --header-timeout.
  void idle_timeout() noexcept { ++idle_timeouts_; }
  void header_timeout() noexcept { ++header_timeouts_; }
  // Live channels: the one server session per channel, its viewers, and the viewers that fell
  // behind the proxy's buffer and jumped to the newest keyframe.
  void live_channel_opened() noexcept { ++live_channels_, ++live_sessions_opened_; }
  void live_channel_closed() noexcept { --live_channels_; }
  void live_viewer_joined() noexcept { ++live_viewers_; }
  void live_viewer_left() noexcept { --live_viewers_; }
  void live_read(std::uint64_t bytes) noexcept { live_read_bytes_ += bytes; }
  void live_skip(std::uint64_t bytes) noexcept { ++live_skips_, live_skipped_bytes_ += bytes; }
  // A response ended (completely or not): its status and the body bytes sent.
  void response(unsigned status, std::uint64_t bytes);
  std::string render(const RdmaFigures& rdma, const ThumbnailFigures& pictures) const;

 private:
  double start_time_ = 0;
  std::int64_t connections_ = 0;
  std::map<unsigned, std::uint64_t> responses_;
  std::uint64_t bytes_ = 0;
  std::uint64_t refused_ = 0, idle_timeouts_ = 0, header_timeouts_ = 0;
  std::int64_t live_channels_ = 0, live_viewers_ = 0;
  std::uint64_t live_sessions_opened_ = 0, live_read_bytes_ = 0, live_skips_ = 0, live_skipped_bytes_ = 0;
};

// /metrics as a plan: 200 with the text for GET, headers only for HEAD, 405 for other methods.
Plan metrics_plan(const std::string& method, const std::string& text);

}  // namespace vod::proxy
