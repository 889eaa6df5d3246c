// SPDX-License-Identifier: LGPL-2.1-or-later
#include "proxy_metrics.hpp"

#include "vod/metrics_text.hpp"

namespace vod::proxy {

ProxyMetrics::ProxyMetrics() : start_time_(metrics::unix_time_now()) {}

void ProxyMetrics::response(unsigned status, std::uint64_t bytes) {
  ++responses_[status];
  bytes_ += bytes;
}

std::string ProxyMetrics::render(const RdmaFigures& rdma, const ThumbnailFigures& pictures) const {
  metrics::Exposition m;
  m.process("vod_proxy", "vod-proxy", start_time_);
  m.family("vod_proxy_http_requests_total", "counter", "HTTP responses sent (or begun), by status code");
  for (const auto& [status, n] : responses_)
    m.sample("vod_proxy_http_requests_total", {{"status", std::to_string(status)}}, static_cast<double>(n));
  m.family("vod_proxy_http_response_bytes_total", "counter", "HTTP body bytes sent");
  m.sample("vod_proxy_http_response_bytes_total", static_cast<double>(bytes_));
  m.family("vod_proxy_http_connections", "gauge", "HTTP connections open");
  m.sample("vod_proxy_http_connections", static_cast<double>(connections_));
  m.family("vod_proxy_http_connections_refused_total", "counter", "HTTP connections refused (503) because --max-connections were open");
  m.sample("vod_proxy_http_connections_refused_total", static_cast<double>(refused_));
  m.family(
      "vod_proxy_http_timeouts_total", "counter",
      "HTTP connections closed by a timeout: idle (no request within --idle-timeout) or header (not whole within --header-timeout: 408)");
  m.sample("vod_proxy_http_timeouts_total", {{"phase", "idle"}}, static_cast<double>(idle_timeouts_));
  m.sample("vod_proxy_http_timeouts_total", {{"phase", "header"}}, static_cast<double>(header_timeouts_));
  m.family("vod_proxy_live_channels", "gauge", "live channels with a server session open (one per channel, shared by its viewers)");
  m.sample("vod_proxy_live_channels", static_cast<double>(live_channels_));
  m.family("vod_proxy_live_sessions_opened_total", "counter", "live channel sessions opened to vod-server");
  m.sample("vod_proxy_live_sessions_opened_total", static_cast<double>(live_sessions_opened_));
  m.family("vod_proxy_live_viewers", "gauge", "HTTP responses streaming a live channel");
  m.sample("vod_proxy_live_viewers", static_cast<double>(live_viewers_));
  m.family("vod_proxy_live_read_bytes_total", "counter",
           "live channel bytes read from vod-server (once per channel, whatever the viewers)");
  m.sample("vod_proxy_live_read_bytes_total", static_cast<double>(live_read_bytes_));
  m.family("vod_proxy_live_skips_total", "counter",
           "times a live viewer fell behind the proxy's buffer (--live-buffer-kib) and jumped to the newest keyframe");
  m.sample("vod_proxy_live_skips_total", static_cast<double>(live_skips_));
  m.family("vod_proxy_live_skipped_bytes_total", "counter", "bytes live viewers skipped by those jumps");
  m.sample("vod_proxy_live_skipped_bytes_total", static_cast<double>(live_skipped_bytes_));
  m.family("vod_proxy_rdma_sessions", "gauge", "connections to vod-server open for movies (one per movie being watched)");
  m.sample("vod_proxy_rdma_sessions", static_cast<double>(rdma.sessions));
  m.family("vod_proxy_rdma_reads_total", "counter", "RDMA Reads completed (or Write-Record records, over UDP)");
  m.sample("vod_proxy_rdma_reads_total", static_cast<double>(rdma.totals.reads_completed));
  m.family("vod_proxy_rdma_read_bytes_total", "counter", "bytes read from vod-server");
  m.sample("vod_proxy_rdma_read_bytes_total", static_cast<double>(rdma.totals.bytes_read));
  m.family("vod_proxy_rdma_reconnects_total", "counter", "reconnections to vod-server after a connection broke");
  m.sample("vod_proxy_rdma_reconnects_total", static_cast<double>(rdma.totals.reconnects));
  m.family("vod_proxy_delivered_bytes_total", "counter", "movie bytes the RDMA sessions handed to HTTP bodies");
  m.sample("vod_proxy_delivered_bytes_total", static_cast<double>(rdma.totals.bytes_delivered));
  m.family("vod_proxy_copied_bytes_total", "counter",
           "of those, bytes copied out of a session's read ring (the rest landed straight in registered body blocks)");
  m.sample("vod_proxy_copied_bytes_total", static_cast<double>(rdma.totals.bytes_copied));
  m.family("vod_proxy_registered_buffers", "gauge",
           "registered body blocks: allocated, held by HTTP responses, pinned by a Read in flight");
  m.sample("vod_proxy_registered_buffers", {{"state", "allocated"}}, static_cast<double>(rdma.buffers.buffers));
  m.sample("vod_proxy_registered_buffers", {{"state", "held"}}, static_cast<double>(rdma.buffers.out));
  m.sample("vod_proxy_registered_buffers", {{"state", "pinned"}}, static_cast<double>(rdma.buffers.pinned));
  m.family("vod_proxy_registered_buffer_bytes", "gauge",
           "bytes of registered memory held by HTTP responses now (bounded by --zero-copy-buffers)");
  m.sample("vod_proxy_registered_buffer_bytes", static_cast<double>(rdma.buffers.out * rdma.buffer_bytes));
  m.family("vod_proxy_server_up", "gauge", "1 when the last catalog read from vod-server succeeded");
  m.sample("vod_proxy_server_up", rdma.catalog_ok ? 1 : 0);
  m.family("vod_proxy_thumbnails_total", "counter",
           "pictures for the web pages: made (decoded), placeholder (could not decode), cached (served from memory)");
  m.sample("vod_proxy_thumbnails_total", {{"result", "made"}}, static_cast<double>(pictures.made));
  m.sample("vod_proxy_thumbnails_total", {{"result", "placeholder"}}, static_cast<double>(pictures.placeholders));
  m.sample("vod_proxy_thumbnails_total", {{"result", "cached"}}, static_cast<double>(pictures.cache_hits));
  return m.text();
}

Plan metrics_plan(const std::string& method, const std::string& text) {
  if (method != "GET" && method != "HEAD") {
    Plan p = error_plan(405, "/metrics answers GET and HEAD only");
    p.headers.emplace_back("Allow", "GET, HEAD");
    return p;
  }
  Plan p;
  p.status = 200;
  p.headers.emplace_back("Content-Type", metrics::kContentType);
  p.headers.emplace_back("Cache-Control", "no-store");
  p.body = text;
  p.send_body = method == "GET";
  return p;
}

}  // namespace vod::proxy
