// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-server's Prometheus metrics. The event loop records into this object on the events that change
// them (a connect, a reject, a disconnect, a rescan; the UDP figures once per loop pass), never on
// the data path of RDMA Reads, which the server does not see. The metrics endpoint's thread renders
// it; a mutex keeps the two apart. The device's own counters are read from sysfs when rendered.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/segment_cache.hpp"
#include "udp/udp_service.hpp"
#include "vod/protocol/private_data.hpp"

namespace vod::server {

struct DevicePortMetrics {
  std::string device;  // e.g. "mlx5_0", "rxe0"
  unsigned port = 1;
  std::uint64_t registered_bytes = 0;  // movies, indices and the current catalog, on this device
};

class ServerMetrics {
 public:
  // (kind, name) -> open connections; kind is movie, catalog or live, name the movie or channel.
  using ConnectionCounts = std::map<std::pair<std::string, std::string>, std::size_t>;

  explicit ServerMetrics(std::string sysfs_root = "/sys/class/infiniband");

  void set_devices(std::vector<DevicePortMetrics> devices);
  void set_catalog(std::uint32_t generation, std::size_t movies, std::size_t live_channels);
  void set_connections(ConnectionCounts counts);
  void count_accept(const std::string& kind);
  // Labelled by the code's name in snake case, e.g. code="unknown_movie".
  void count_reject(proto::RejectCode code);
  void set_udp(const udp::UdpStats& stats);
  // The segment cache's figures (with --cache-size): its counters, its slots, and the requests its
  // connections sent.
  struct CacheFigures {
    cache::CacheStats stats;
    std::uint32_t slots = 0, slots_in_use = 0;
    std::uint64_t requests = 0, bad_messages = 0;
    std::uint64_t credit_violations = 0, coalesced = 0;
  };
  void set_cache(CacheFigures figures);
  // Each live channel's counters: what its source published, and with --live-record what was recorded.
  struct LiveFigures {
    std::string channel;
    bool recording = false;  // --live-record
    std::uint64_t bytes = 0, records = 0, streams = 0;
    std::uint64_t recorded_bytes = 0, recordings = 0, record_errors = 0, record_lost = 0;
    bool dvr = false;  // --live-dvr
    std::uint64_t dvr_write_errors = 0;
  };
  void set_live(std::vector<LiveFigures> figures);
  void set_draining();
  // The port's active link rate from sysfs ("100 Gb/sec (4X EDR)"), in Gbit/s; 0 when unknown.
  double port_rate_gbps(const std::string& device, unsigned port) const;

  // The text exposition (metrics_text.hpp) of everything above, plus the RDMA port counters of each
  // device's port from sysfs (counters/ and hw_counters/) where the kernel exposes them.
  std::string render() const;

 private:
  mutable std::mutex mutex_;
  std::string sysfs_root_;
  double start_time_ = 0;
  std::vector<DevicePortMetrics> devices_;
  std::uint32_t generation_ = 0;
  std::size_t movies_ = 0, live_channels_ = 0;
  ConnectionCounts connections_;
  std::map<std::string, std::uint64_t> accepts_, rejects_;
  bool have_udp_ = false;
  udp::UdpStats udp_;
  std::optional<CacheFigures> cache_;
  std::vector<LiveFigures> live_;
  bool draining_ = false;
};

}  // namespace vod::server
