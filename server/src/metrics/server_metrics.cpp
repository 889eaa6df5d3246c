// SPDX-License-Identifier: LGPL-2.1-or-later
#include "metrics/server_metrics.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "vod/metrics_text.hpp"

namespace vod::server {

namespace {

namespace fs = std::filesystem;

// The files of one sysfs counter directory whose content is a number, by name.
std::vector<std::pair<std::string, double>> read_counters(const fs::path& dir) {
  std::vector<std::pair<std::string, double>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    std::ifstream in(entry.path());
    double value = 0;
    if (in >> value) out.emplace_back(entry.path().filename().string(), value);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void render_cache(metrics::Exposition& m, const ServerMetrics::CacheFigures& c) {
  const cache::CacheStats& s = c.stats;
  m.family("vod_server_cache_slots", "gauge", "slots of the segment cache's arena");
  m.sample("vod_server_cache_slots", c.slots);
  m.family("vod_server_cache_slots_in_use", "gauge", "slots holding a segment or being filled from disk");
  m.sample("vod_server_cache_slots_in_use", c.slots_in_use);
  m.family("vod_server_cache_requests_total", "counter",
           "segment requests clients sent (one-sided hits send none and are not counted here)");
  m.sample("vod_server_cache_requests_total", static_cast<double>(c.requests));
  m.family("vod_server_cache_bad_messages_total", "counter", "messages on VoD connections that were not segment requests (dropped)");
  m.sample("vod_server_cache_bad_messages_total", static_cast<double>(c.bad_messages));
  m.family("vod_server_cache_credit_violations_total", "counter",
           "connections cut off for a segment request beyond their credits (more unanswered than the table allows)");
  m.sample("vod_server_cache_credit_violations_total", static_cast<double>(c.credit_violations));
  m.family("vod_server_cache_coalesced_requests_total", "counter",
           "segment requests a connection repeated while its first was unanswered (one cache waiter for all)");
  m.sample("vod_server_cache_coalesced_requests_total", static_cast<double>(c.coalesced));
  m.family("vod_server_cache_hits_total", "counter", "segments asked for (demand or read-ahead) that were resident");
  m.sample("vod_server_cache_hits_total", static_cast<double>(s.hits));
  m.family("vod_server_cache_misses_total", "counter", "demanded segments read from disk (or the origin)");
  m.sample("vod_server_cache_misses_total", static_cast<double>(s.misses));
  m.family("vod_server_cache_readahead_fills_total", "counter", "read-ahead segments read from disk (or the origin)");
  m.sample("vod_server_cache_readahead_fills_total", static_cast<double>(s.readahead_fills));
  m.family("vod_server_cache_evictions_total", "counter", "segments evicted from their slot");
  m.sample("vod_server_cache_evictions_total", static_cast<double>(s.evictions));
  m.family("vod_server_cache_over_share_evictions_total", "counter",
           "segments evicted within their grace because their requester held more than its fair share of the slots");
  m.sample("vod_server_cache_over_share_evictions_total", static_cast<double>(s.over_share_evictions));
  m.family("vod_server_cache_disk_read_bytes_total", "counter", "bytes read from disk into the cache");
  m.sample("vod_server_cache_disk_read_bytes_total", static_cast<double>(s.disk_bytes));
  m.family("vod_server_cache_disk_errors_total", "counter", "segment reads from disk that failed");
  m.sample("vod_server_cache_disk_errors_total", static_cast<double>(s.disk_errors));
  m.family("vod_server_cache_origin_bytes_total", "counter", "bytes filled into the cache from the HTTP origin (--origin)");
  m.sample("vod_server_cache_origin_bytes_total", static_cast<double>(s.origin_bytes));
  m.family("vod_server_cache_origin_requests_total", "counter", "Range requests made to the origin for fills, retries included");
  m.sample("vod_server_cache_origin_requests_total", static_cast<double>(s.origin_requests));
  m.family("vod_server_cache_origin_errors_total", "counter", "fills the origin did not deliver, after their retries");
  m.sample("vod_server_cache_origin_errors_total", static_cast<double>(s.origin_errors));
  m.family("vod_server_cache_origin_changes_total", "counter", "fills that found another version of their movie at the origin");
  m.sample("vod_server_cache_origin_changes_total", static_cast<double>(s.origin_changes));
  m.family("vod_server_cache_fault_seconds", "histogram", "fault-in latency: a demanded segment's request to its slot's publication");
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < std::size(cache::kFillBuckets); ++i) {
    cumulative += s.fill_buckets.at(i);
    char le[32];
    std::snprintf(le, sizeof le, "%g", cache::kFillBuckets[i]);
    m.sample("vod_server_cache_fault_seconds_bucket", {{"le", le}}, static_cast<double>(cumulative));
  }
  m.sample("vod_server_cache_fault_seconds_bucket", {{"le", "+Inf"}}, static_cast<double>(s.fill_count));
  m.sample("vod_server_cache_fault_seconds_sum", s.fill_seconds_sum);
  m.sample("vod_server_cache_fault_seconds_count", static_cast<double>(s.fill_count));
}

}  // namespace

ServerMetrics::ServerMetrics(std::string sysfs_root) : sysfs_root_(std::move(sysfs_root)), start_time_(metrics::unix_time_now()) {}

void ServerMetrics::set_devices(std::vector<DevicePortMetrics> devices) {
  std::lock_guard lock(mutex_);
  devices_ = std::move(devices);
}

void ServerMetrics::set_catalog(std::uint32_t generation, std::size_t movies, std::size_t live_channels) {
  std::lock_guard lock(mutex_);
  generation_ = generation;
  movies_ = movies;
  live_channels_ = live_channels;
}

void ServerMetrics::set_connections(ConnectionCounts counts) {
  std::lock_guard lock(mutex_);
  // A (kind, name) that had connections stays at 0 rather than vanishing, so rate() and graphs see
  // the drop.
  for (auto& [key, n] : connections_) n = 0;
  for (auto& [key, n] : counts) connections_[key] = n;
}

void ServerMetrics::count_accept(const std::string& kind) {
  std::lock_guard lock(mutex_);
  ++accepts_[kind];
}

void ServerMetrics::count_reject(proto::RejectCode code) {
  std::string name = proto::to_string(code);
  std::replace(name.begin(), name.end(), ' ', '_');
  std::lock_guard lock(mutex_);
  ++rejects_[name];
}

void ServerMetrics::set_udp(const udp::UdpStats& stats) {
  std::lock_guard lock(mutex_);
  have_udp_ = true;
  udp_ = stats;
}

void ServerMetrics::set_cache(CacheFigures figures) {
  std::lock_guard lock(mutex_);
  cache_ = std::move(figures);
}

void ServerMetrics::set_live(std::vector<LiveFigures> figures) {
  std::lock_guard lock(mutex_);
  live_ = std::move(figures);
}

void ServerMetrics::set_draining() {
  std::lock_guard lock(mutex_);
  draining_ = true;
}

std::string ServerMetrics::render() const {
  std::lock_guard lock(mutex_);
  metrics::Exposition m;
  m.process("vod_server", "vod-server", start_time_);
  m.family("vod_server_draining", "gauge", "1 after SIGTERM, while connected clients finish");
  m.sample("vod_server_draining", draining_ ? 1 : 0);
  m.family("vod_server_catalog_generation", "gauge", "the catalog generation new clients get (1 at start, +1 per rescan)");
  m.sample("vod_server_catalog_generation", generation_);
  m.family("vod_server_movies", "gauge", "movies in the current catalog");
  m.sample("vod_server_movies", static_cast<double>(movies_));
  m.family("vod_server_live_channels", "gauge", "live channels configured");
  m.sample("vod_server_live_channels", static_cast<double>(live_channels_));
  // The channels with the feature (bool_field: recording, dvr; nullptr: all).
  const auto per_channel = [&](const char* name, const char* help, std::uint64_t LiveFigures::*field, bool LiveFigures::*with = nullptr) {
    if (std::none_of(live_.begin(), live_.end(), [&](const LiveFigures& f) { return !with || f.*with; })) return;
    m.family(name, "counter", help);
    for (const auto& f : live_)
      if (!with || f.*with) m.sample(name, {{"channel", f.channel}}, static_cast<double>(f.*field));
  };
  per_channel("vod_server_live_bytes_total", "bytes a live channel's source published", &LiveFigures::bytes);
  per_channel("vod_server_live_records_total", "records a live channel's source published", &LiveFigures::records);
  per_channel("vod_server_live_streams_total", "streams a live channel's source began (starts, restarts and loops)", &LiveFigures::streams);
  per_channel("vod_server_live_recorded_bytes_total", "--live-record: bytes written to recordings", &LiveFigures::recorded_bytes,
              &LiveFigures::recording);
  per_channel("vod_server_live_recordings_total", "--live-record: recordings completed and renamed", &LiveFigures::recordings,
              &LiveFigures::recording);
  per_channel("vod_server_live_record_errors_total", "--live-record: failed writes (a full disk...): each pauses recording",
              &LiveFigures::record_errors, &LiveFigures::recording);
  per_channel("vod_server_live_record_lost_bytes_total", "--live-record: bytes not recorded because of failed writes",
              &LiveFigures::record_lost, &LiveFigures::recording);
  per_channel("vod_server_live_dvr_write_errors_total",
              "--live-dvr: failed writes of the DVR window (an I/O error): each starts the window again", &LiveFigures::dvr_write_errors,
              &LiveFigures::dvr);

  if (cache_) render_cache(m, *cache_);

  m.family("vod_server_connections", "gauge", "open RDMA connections by kind (movie, catalog, live) and movie or channel");
  for (const auto& [key, n] : connections_)
    m.sample("vod_server_connections", {{"kind", key.first}, {"movie", key.second}}, static_cast<double>(n));
  m.family("vod_server_connects_total", "counter", "RDMA connections accepted, by kind");
  for (const auto& [kind, n] : accepts_) m.sample("vod_server_connects_total", {{"kind", kind}}, static_cast<double>(n));
  m.family("vod_server_rejects_total", "counter", "RDMA connect requests refused, by reject code (docs/protocol.md)");
  for (const auto& [code, n] : rejects_) m.sample("vod_server_rejects_total", {{"code", code}}, static_cast<double>(n));

  m.family("vod_server_registered_bytes", "gauge", "bytes registered for RDMA Read on each device: movies, indices, current catalog");
  for (const auto& d : devices_) m.sample("vod_server_registered_bytes", {{"device", d.device}}, static_cast<double>(d.registered_bytes));

  // The device's own counters, as the kernel names them (what 'rdma statistic' and perfquery show).
  bool port_family = false, hw_family = false;
  for (const auto& d : devices_) {
    const fs::path port = fs::path(sysfs_root_) / d.device / "ports" / std::to_string(d.port);
    for (const auto& [name, value] : read_counters(port / "counters")) {
      if (!port_family)
        m.family("vod_rdma_port_stat", "untyped",
                 "the RDMA port's counters from sysfs (ports/N/counters), by name; data counters count 4-byte words");
      port_family = true;
      m.sample("vod_rdma_port_stat", {{"device", d.device}, {"port", std::to_string(d.port)}, {"counter", name}}, value);
    }
    for (const auto& [name, value] : read_counters(port / "hw_counters")) {
      if (!hw_family)
        m.family("vod_rdma_hw_stat", "untyped", "the RDMA device's hardware counters from sysfs (ports/N/hw_counters), by name");
      hw_family = true;
      m.sample("vod_rdma_hw_stat", {{"device", d.device}, {"port", std::to_string(d.port)}, {"counter", name}}, value);
    }
  }

  if (have_udp_) {
    const auto counter = [&m](const char* name, const char* help, std::uint64_t v) {
      m.family(name, "counter", help);
      m.sample(name, static_cast<double>(v));
    };
    counter("vod_server_udp_hellos_total", "UDP Write-Record hellos answered", udp_.hellos);
    counter("vod_server_udp_requests_total", "UDP Write-Record read requests served", udp_.requests);
    counter("vod_server_udp_datagrams_total", "UDP Write-Record datagrams sent", udp_.datagrams);
    counter("vod_server_udp_bytes_total", "UDP Write-Record payload bytes sent", udp_.bytes);
    counter("vod_server_udp_errors_sent_total", "UDP Write-Record error replies sent", udp_.errors_sent);
    counter("vod_server_udp_dropped_total", "UDP datagrams dropped: malformed, unexpected, or over a rate limit for errors", udp_.dropped);
    counter("vod_server_udp_bad_cookies_total", "UDP requests with a missing, forged or expired cookie", udp_.bad_cookies);
    counter("vod_server_udp_rate_limited_total", "UDP requests refused at a rate limit", udp_.rate_limited);
    counter("vod_server_udp_jobs_expired_total", "UDP ranges dropped at their deadline before they were sent in full", udp_.expired);
    counter("vod_server_udp_clients_forgotten_total", "UDP client addresses whose state was dropped (idle, or evicted for a new one)",
            udp_.clients_forgotten);
  }
  return m.text();
}

double ServerMetrics::port_rate_gbps(const std::string& device, unsigned port) const {
  std::ifstream in(sysfs_root_ + "/" + device + "/ports/" + std::to_string(port) + "/rate");
  double gbps = 0;
  std::string unit;
  if (!(in >> gbps >> unit) || unit.rfind("Gb", 0) != 0 || !(gbps > 0 && gbps < 1e6)) return 0;
  return gbps;
}

}  // namespace vod::server
