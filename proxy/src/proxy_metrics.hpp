// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy's Prometheus metrics at /metrics, on its own HTTP listener (127.0.0.1 by default): the
// responses by status and their bytes, the HTTP connections open, and from the RDMA side the
// sessions open, RDMA Reads, bytes read and reconnects. Everything runs on the proxy's one io
// thread, so the counters need no lock.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "request_router.hpp"
#include "vod/client/stats.hpp"

namespace vod::proxy {

struct RdmaFigures {
  std::size_t sessions = 0;  // movie sessions open now
  client::Stats totals;      // summed over every session since the start, closed ones included
  bool catalog_ok = false;   // the last catalog read succeeded
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
  // A response ended (completely or not): its status and the body bytes sent.
  void response(unsigned status, std::uint64_t bytes);
  std::string render(const RdmaFigures& rdma, const ThumbnailFigures& pictures) const;

 private:
  double start_time_ = 0;
  std::int64_t connections_ = 0;
  std::map<unsigned, std::uint64_t> responses_;
  std::uint64_t bytes_ = 0;
};

// /metrics as a plan: 200 with the text for GET, headers only for HEAD, 405 for other methods.
Plan metrics_plan(const std::string& method, const std::string& text);

}  // namespace vod::proxy
