// SPDX-License-Identifier: LGPL-2.1-or-later
// What a VodServer publishes: its catalog generations, registered on every device and offered over
// UDP (again, within the same generation, as the indexer finds movies' descriptions and content
// identities), their metrics, and its record in a fleet.
#include "vod_server.hpp"

#include <cmath>

#include "udp/udp_regions.hpp"
#include "vod/log.hpp"

namespace vod::server {

cluster::MemberRecord VodServer::member_record() const {
  cluster::MemberRecord r;
  cluster::parse_host_port(config_.advertise, r.host, r.port, "--advertise");
  r.weight = config_.cluster_weight;
  r.cache_bytes = config_.cache_size;
  for (const auto& [ctx, port] : device_ports_) r.nic_gbps += metrics_.port_rate_gbps(rdma::device_name(ctx), port);
  ServerMetrics::ConnectionCounts counts;
  vod_.count(counts);
  live_.count(counts);
  r.load = fleet::estimate_load(counts, [this](const std::string& kind, const std::string& name) -> std::uint64_t {
    if (kind == "live")
      return static_cast<std::uint64_t>(config_.live_bitrate_mbps * 1e6);  // the assumed rate: a channel's is measured by its source
    if (kind != "movie") return 0;
    for (const auto& m : library_.movies)
      if (m->name == name) return m->info.bitrate_bps;
    return 0;
  });
  if (udp_) r.load.udp_sessions = udp_->sessions();
  r.load.served_mbps = udp_served_mbps_;
  r.catalog_generation = library_.generation;
  r.spread = config_.spread;
  for (const auto& channel : config_.live_channels) r.live.push_back(channel.name);
  return r;
}

void VodServer::measure_load() {
  // What Write-Record sent since the last measure, in Mbit/s to one decimal (the record changes
  // with the load, not with noise); then the record again, which MemberRegistration puts only when
  // it changed, at most once a second: so a server without RDMA, whose sessions come and go without
  // a connect, keeps its record current too.
  const auto now = std::chrono::steady_clock::now();
  const std::uint64_t bytes = udp_ ? udp_->stats().bytes : 0;
  const double seconds = std::chrono::duration<double>(now - load_measured_at_).count();
  if (load_measured_at_ != std::chrono::steady_clock::time_point{} && seconds > 0)
    udp_served_mbps_ = std::round(static_cast<double>(bytes - udp_bytes_measured_) * 8 / seconds / 1e5) / 10;
  udp_bytes_measured_ = bytes;
  load_measured_at_ = now;
  if (membership_) membership_->update(member_record());
  load_timer_ = reactor_.at(now + std::chrono::seconds(1), [this] { measure_load(); });
}

void VodServer::offer(Library& library) {
  library.titles = titles_.update(library);
  // The channels' DVR windows are served as cached movies, listed after the library's (whose
  // positions the titles name): a copy of the list, so the library itself never holds them.
  const Library* served = &library;
  Library with_windows;
  if (!channels_.windows().empty()) {
    with_windows.generation = library.generation;
    with_windows.movies = library.movies;
    with_windows.movies.insert(with_windows.movies.end(), channels_.windows().begin(), channels_.windows().end());
    with_windows.titles = library.titles;
    served = &with_windows;
  }
  std::map<ibv_context*, std::shared_ptr<CatalogRegistration>> registered;
  for (auto& [ctx, device] : devices_) registered[ctx] = register_library(device, *served, channels_.catalog_entries(ctx));
  // Connections keep the catalog they were accepted with; new ones get this one. Each carries the
  // status words while anyone holds it.
  for (const auto& [ctx, r] : registered) status_.watch({r->bytes.data(), r->bytes.length()}, r);
  current_ = std::move(registered);
  if (udp_) {
    auto regions = udp::udp_regions(*served, channels_.catalog_entries(nullptr));
    status_.watch(regions->catalog, regions);
    udp_->publish(std::move(regions));
  }
}

void VodServer::beat() {
  status_.tick();
  heartbeat_timer_ =
      reactor_.at(std::chrono::steady_clock::now() + std::chrono::milliseconds(proto::kHeartbeatPeriodMs), [this] { beat(); });
}

void VodServer::publish_generation(Library next) {
  offer(next);
  if (indexer_)
    for (auto& m : next.unindexed) indexer_->add(m);
  next.unindexed.clear();
  library_ = std::move(next);
  update_catalog_metrics();
  if (membership_) membership_->update(member_record());
}

void VodServer::republish() {
  try {
    offer(library_);
  } catch (const std::exception& e) {  // a registration the device refuses: the catalog published before still serves
    log::error("server", std::string("cannot register generation ") + std::to_string(library_.generation) + " again: " + e.what() +
                             "; serving the catalog registered before");
    return;
  }
  update_catalog_metrics();
  log::info("server", "catalog generation " + std::to_string(library_.generation) +
                          " republished with what the indexer found since (probes, content identities)");
}

void VodServer::update_catalog_metrics() {
  metrics_.set_catalog(library_.generation, library_.movies.size(), config_.live_channels.size());
  std::vector<DevicePortMetrics> devices;
  for (const auto& [ctx, device] : devices_) {
    DevicePortMetrics d{rdma::device_name(ctx), device_ports_.count(ctx) ? device_ports_.at(ctx) : 1u, 0};
    if (auto c = current_.find(ctx); c != current_.end() && c->second->mr) d.registered_bytes += c->second->mr->length;
    for (const auto& [movie, weak] : device->movies)
      if (auto r = weak.lock()) d.registered_bytes += (r->movie_mr ? r->movie_mr->length : 0) + (r->index_mr ? r->index_mr->length : 0);
    devices.push_back(std::move(d));
  }
  metrics_.set_devices(std::move(devices));
}

}  // namespace vod::server
