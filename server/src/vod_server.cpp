// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod_server.hpp"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <ctime>

#include "ondemand/segment_channel.hpp"
#include "origin/origin_library.hpp"
#include "udp/udp_regions.hpp"
#include "vod/log.hpp"
#include "vod/rdma/error.hpp"
#include "windows/rdma_window_verbs.hpp"

namespace vod::server {

VodServer::DeviceList::~DeviceList() {
  if (list) rdma_free_devices(list);
}

namespace {
live::LiveOptions live_options(const ServerConfig& c, const cache::SegmentCache* cache) {
  live::LiveOptions o;
  o.buffer_seconds = c.live_buffer_seconds;
  o.assumed_bitrate_bps = c.live_bitrate_mbps * 1e6;
  o.source.assumed_bitrate_bps = o.assumed_bitrate_bps;
  if (!c.live_multicast.empty()) {
    o.multicast = udp::parse_multicast(c.live_multicast);
    o.multicast->interface = c.live_multicast_interface;
    o.multicast->ttl = c.live_multicast_ttl;
    o.multicast->payload = c.live_multicast_payload;
  }
  if (c.live_record) o.record = live::RecordOptions{c.media_dir, c.live_record_split, c.live_record_keep};
  if (c.live_dvr.count() && cache)
    o.dvr = live::LiveOptions::Dvr{{c.live_dvr_dir, c.live_dvr, c.live_dvr_size, cache->options().segment_size}, cache->layout()};
  return o;
}
origin::FetcherOptions origin_options(const ServerConfig& c) {
  origin::FetcherOptions o;
  o.attempt_timeout = std::chrono::milliseconds(c.origin_timeout_ms);
  o.budget = o.attempt_timeout * 3 / 2;
  o.ca_file = c.origin_cacert;
  return o;
}
std::unique_ptr<cache::SegmentCache> make_cache(loop::Reactor& reactor, const ServerConfig& c) {
  if (!c.cache_size && !c.live_dvr.count()) return nullptr;
  cache::CacheOptions o;
  o.cache_size = c.cache_size ? c.cache_size : c.live_dvr_cache;  // --live-dvr alone: a cache for the windows only
  o.segment_size = c.segment_size;
  o.grace = std::chrono::milliseconds(c.cache_grace_ms);
  o.read_deadline = std::chrono::milliseconds(c.cache_read_deadline_ms);
  o.remote_readers = !c.no_rdma;
  if (!c.origin.empty()) o.origin = origin_options(c);
  return std::make_unique<cache::SegmentCache>(reactor, o);
}
}  // namespace

VodServer::VodServer(ServerConfig config)
    : config_(std::move(config)),
      source_limits_({config_.connect_rate, config_.connect_burst, config_.max_per_source}),
      cache_(make_cache(reactor_, config_)),
      pinned_(config_.isolation_memory),
      completions_(reactor_, hub_),
      channels_(reactor_, config_.live_channels, live_options(config_, cache_.get())),
      live_({reactor_, completions_, routes_, metrics_, [this] { return clients(); }, &pinned_}, channels_),
      vod_({reactor_, completions_, routes_, metrics_, [this] { return clients(); }, [this] { counts_changed_ = true; }, cache_.get(),
            cache_ ? &slot_watchers_.emplace(cache_->slots()) : nullptr, &pinned_}) {
  if (cache_) cache_->on_refill([this](std::uint32_t slot) { slot_watchers_->refilling(slot); });
  channels_.on_recorded([this] {
    if (!recorded_timer_.armed())
      recorded_timer_ = reactor_.at(std::chrono::steady_clock::now() + std::chrono::seconds(1), [this] {
        log::info("server", "recordings changed: rescanning " + config_.media_dir);
        scan_media();
      });
  });
  if (!config_.auth_secret.empty()) load_auth_keys();
  if (!config_.revoked.empty()) load_revocations();
  library_options_.remux_ts = config_.remux == "ts";
  for (const auto& channel : config_.live_channels) library_options_.reserved_names.insert(channel.name);
  if (cache_ && config_.cache_size) {  // movies from the cache (with --live-dvr alone, it holds the windows only)
    index_store_.emplace(config_.state_dir);
    const auto republish_soon = [this] {
      if (!republish_timer_.armed())
        republish_timer_ = reactor_.at(std::chrono::steady_clock::now() + std::chrono::seconds(1), [this] { republish(); });
    };
    indexer_ = std::make_unique<cache::LazyIndexer>(
        reactor_, *index_store_, republish_soon,
        [this, republish_soon](const std::shared_ptr<const LoadedMovie>& listed, std::shared_ptr<const LoadedMovie> described) {
          auto& movies = library_.movies;
          auto at = std::find(movies.begin(), movies.end(), listed);
          if (at == movies.end()) return false;  // a rescan dropped it meanwhile
          if (described) *at = std::move(described);
          else movies.erase(at);
          republish_soon();
          return true;
        });
    library_options_.index_store = &*index_store_;
    library_options_.cache = cache_->layout();
    library_options_.pin = config_.pin;
    library_options_.pin_budget = config_.pin_budget;
    library_options_.probe_budget = std::chrono::milliseconds(config_.probe_budget_ms);
    if (!config_.origin.empty()) {
      origin::configure(origin_options(config_));
      library_options_.origin = config_.origin;
      cache_->on_changed([this](const cache::CachedFile&) { rescan_soon(); });
      indexer_->set_cache_reader(&cache_reader_.emplace(reactor_, *cache_));
      cache_->on_first_use([this](const std::shared_ptr<cache::CachedFile>& file) {
        const auto at = std::find_if(library_.movies.begin(), library_.movies.end(), [&](const auto& m) { return m->cached == file; });
        if (at != library_.movies.end()) indexer_->index_on_first_use(*at);
      });
    }
  }
  install_test_hooks();
  if (!config_.no_rdma) rdma::require_device();

  // Signals arrive through a signalfd, so the event loop sleeps in one epoll_wait for everything.
  signals_.emplace(reactor_, std::initializer_list<int>{SIGTERM, SIGINT, SIGHUP}, [this](int signo) { on_signal(signo); });

  library_ = first_scan();
  if (config_.udp_port) start_udp();
  if (!config_.no_rdma) {
    listener_ = std::make_unique<rdma::Listener>(config_.bind == "0.0.0.0" ? "" : config_.bind, config_.port, config_.backlog);
    open_devices();
    admitter_.emplace(cm::Admitter::Policy{config_.max_clients, source_limits_, auth_, revoked_, draining_, current_}, metrics_,
                      [this] { return clients(); });
    admitter_->set_transport(Admit::Kind::catalog, vod_);
    admitter_->set_transport(Admit::Kind::movie, vod_);
    admitter_->set_transport(Admit::Kind::live, live_);
    dispatcher_.emplace(
        reactor_, *listener_, routes_, [this](rdma::CmEvent& e) { admitter_->on_connect_request(e); }, [this] { stop_ = true; });
    dispatcher_->on_change([this] { counts_changed_ = true; });
  } else {
    publish_generation(std::move(library_));
  }
  // After the signals were blocked: the endpoint's thread inherits the mask, so SIGTERM still
  // reaches the signalfd.
  if (config_.metrics_port)
    metrics_endpoint_ = std::make_unique<MetricsEndpoint>(config_.metrics_bind, config_.metrics_port, [this] { return metrics_.render(); });
  if (metrics_endpoint_ && udp_) metrics_.set_udp(udp_->stats());
  // Connects and disconnects are the only events that change the client counts: rare, O(clients).
  reactor_.after_turn([this] {
    if (std::exchange(counts_changed_, false)) {
      if (metrics_endpoint_) update_connection_metrics();
      if (membership_) membership_->update(member_record());
      if (notifier_.active()) notifier_.status(service_status());
    }
    if (std::exchange(udp_served_, false)) {
      if (metrics_endpoint_) metrics_.set_udp(udp_->stats());
      // A Write-Record session came or went: the record now (MemberRegistration puts it at most once
      // a second), not at the next measure, since placement in a fleet counts sessions.
      if (membership_ && !draining_ && udp_->sessions() != udp_sessions_recorded_) {
        udp_sessions_recorded_ = udp_->sessions();
        membership_->update(member_record());
      }
    }
    if (metrics_endpoint_ && !channels_.empty()) update_live_metrics();
    if (cache_ && metrics_endpoint_) {
      const auto& ch = vod_.channel_stats();
      metrics_.set_cache(
          {cache_->stats(), cache_->slots(), cache_->slots_in_use(), ch.requests, ch.bad_messages, ch.credit_violations, ch.coalesced});
    }
  });
  channels_.start();
  log::info("server", "listening on " + config_.bind + ":" + (listener_ ? std::to_string(listener_->port()) : std::string("- (no RDMA)")) +
                          (udp_ ? ", UDP " + std::to_string(udp_->port()) : std::string()) + " with " +
                          std::to_string(library_.movies.size()) + " movies and " + std::to_string(config_.live_channels.size()) +
                          " live channels, at most " + std::to_string(config_.max_clients) + " clients");
  if (indexer_) indexer_->start();  // only now: nothing before "listening" reads a movie body
  if (!config_.cluster.empty())     // listening: clients may be sent here from now on
    membership_ = std::make_unique<fleet::MemberRegistration>(cluster::parse_etcd_url(config_.cluster),
                                                              std::chrono::seconds(config_.cluster_ttl), member_record());
  if (membership_) measure_load();  // then every second
  beat();                           // then every kHeartbeatPeriodMs
}

VodServer::~VodServer() = default;

// The Write-Record service, in the same event loop.
void VodServer::start_udp() {
  udp::UdpOptions o;
  o.bind = config_.bind;
  o.port = config_.udp_port;
  o.max_rate_bps = config_.udp_max_rate_mbps * 1e6;
  o.client_rate_bps = config_.udp_client_rate_mbps * 1e6;
  o.max_payload = config_.udp_max_payload;
  o.zero_copy = config_.udp_zero_copy;
  if (!config_.udp_test_drop.empty()) {
    o.test_drop = udp::parse_test_drop(config_.udp_test_drop);
    log::warn("udp", "--udp-test-drop " + config_.udp_test_drop + ": dropping datagrams on purpose (a test hook)");
  }
  udp_ = std::make_unique<udp::UdpService>(o, cache_.get());
  udp_in_loop_.push_back(reactor_.add(udp_->socket_fd(), [this] {
    udp_->on_readable();
    udp_served_ = true;
  }));
  udp_in_loop_.push_back(reactor_.add(udp_->timer_fd(), [this] {
    udp_->on_timer();
    udp_served_ = true;
  }));
}

// Hooks for tests (the options say so in their names); each one logs a warning when it is on.
void VodServer::install_test_hooks() {
  if (config_.test_evict_every_ms && cache_) {
    log::warn("cache",
              "--test-evict-every " + std::to_string(config_.test_evict_every_ms) + " ms: evicting cache slots on purpose (a test hook)");
    test_evict_timer_ =
        reactor_.at(std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.test_evict_every_ms), [this] { test_evict(); });
  }
  if (config_.test_fail_binds) {
    windows::RdmaWindowVerbs::fail_every(config_.test_fail_binds);
    log::warn("auth", "--test-fail-binds " + std::to_string(config_.test_fail_binds) + ": window binds fail on purpose (a test hook)");
  }
  if (config_.test_fail_notifications) {
    ondemand::SegmentChannel::fail_posts_every(config_.test_fail_notifications);
    log::warn("cache", "--test-fail-notifications " + std::to_string(config_.test_fail_notifications) +
                           ": segment notification posts fail on purpose (a test hook)");
  }
}

void VodServer::test_evict() {
  cache_->evict_one_for_test();
  test_evict_timer_ =
      reactor_.at(std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.test_evict_every_ms), [this] { test_evict(); });
}

void VodServer::update_live_metrics() {
  std::vector<ServerMetrics::LiveFigures> figures;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    const auto s = channels_.stats(i);
    figures.push_back({channels_.name(i), s.recording, s.bytes, s.records, s.streams, s.recorder.bytes, s.recorder.files,
                       s.recorder.write_errors, s.recorder.lost, s.dvr, s.dvr_write_errors});
  }
  metrics_.set_live(std::move(figures));
}

void VodServer::update_connection_metrics() {
  ServerMetrics::ConnectionCounts counts;
  vod_.count(counts);
  live_.count(counts);
  metrics_.set_connections(std::move(counts));
}

void VodServer::open_devices() {
  // A listener bound to one address has its device already; a wildcard listener may see
  // connections on any device, so register everywhere up front rather than under a client's connect.
  int count = 0;
  rdma_devices_.list = rdma_get_devices(&count);
  std::vector<ibv_context*> contexts;
  if (listener_->id()->verbs) contexts.push_back(listener_->id()->verbs);
  else
    for (int i = 0; rdma_devices_.list && i < count; ++i) contexts.push_back(rdma_devices_.list[i]);
  std::string names;
  for (ibv_context* ctx : contexts) {
    const std::string name = rdma::device_name(ctx);
    names += (names.empty() ? "" : ", ") + name;
    if (!config_.device.empty() && name != config_.device) continue;
    const std::uint8_t port = listener_->id()->port_num ? listener_->id()->port_num : 1;
    auto device = open_device(ctx, port, config_.isolation, !config_.auth_secret.empty());
    if (cache_) register_arena(*device, *cache_);
    device_ports_[ctx] = port;
    completions_.add_device(ctx);  // the device's CQ, and its channel in the loop, before any QP
    channels_.register_device(device);
    devices_[ctx] = std::move(device);
  }
  publish_generation(std::move(library_));
  if (devices_.empty()) {
    if (!config_.device.empty())
      throw rdma::NoDeviceError("--device " + config_.device +
                                " is not an RDMA device this listener can use (found: " + (names.empty() ? "none" : names) + ")");
    throw rdma::NoDeviceError("no RDMA device behind " + config_.bind);
  }
}

ServiceStatus VodServer::service_status() const noexcept {
  return {clients(), library_.movies.size(), config_.live_channels.size(), library_.generation};
}

void VodServer::load_auth_keys() {
  auth_ = auth::TokenAuthority::load(config_.auth_secret);  // throws naming the file and line
  log::info("auth", "authorization on: " + std::to_string(auth_->key_count()) + " key(s) from " + config_.auth_secret + ", newest id " +
                        std::to_string(auth_->newest_key()) + "; every connect needs a token");
}

void VodServer::load_revocations() {
  revoked_ = auth::RevocationList::load(config_.revoked);  // throws naming the file and line
  log::info("auth", "revocations: " + std::to_string(revoked_->size()) + " entries from " + config_.revoked);
}

void VodServer::cut_off_revoked() {
  if (!revoked_) return;
  const auto why = [this](const auth::Grant& g) { return revoked_->revoked(g.terms().token, g.terms().address); };
  vod_.cut_off_if(why);
  live_.cut_off_if(why);
}

void VodServer::rescan() {
  log::info("server",
            origin_scans_ ? "SIGHUP: listing the origin " + config_.origin + " again" : "SIGHUP: rescanning " + config_.media_dir);
  notifier_.reloading();
  if (!config_.auth_secret.empty()) {
    try {
      load_auth_keys();  // a key removed from the file no longer admits anyone
    } catch (const std::exception& e) {
      log::error("auth", std::string("cannot re-read the keys, keeping the ones loaded: ") + e.what());
    }
  }
  if (!config_.revoked.empty()) {
    try {
      load_revocations();
      cut_off_revoked();
    } catch (const std::exception& e) {
      log::error("auth", std::string("cannot re-read the revocations, keeping the ones loaded: ") + e.what());
    }
  }
  if (origin_scans_) {
    rescan_soon(std::chrono::seconds(1));  // on its thread: the listing is published when it is done
  } else {
    scan_media();
  }
  notifier_.ready(service_status());
}

void VodServer::scan_media() {
  try {
    publish_generation(scan_library(config_.media_dir, library_.generation + 1, &library_, library_options_));
  } catch (const std::exception& e) {
    log::error("server", std::string("rescan failed, keeping generation ") + std::to_string(library_.generation) + ": " + e.what());
  }
}

void VodServer::begin_drain() {
  if (draining_) return;
  draining_ = true;
  notifier_.stopping();
  metrics_.set_draining();
  status_.set_draining();                                // viewers in a fleet read it and move on now, before the drain's end
  udp_last_request_ = std::chrono::steady_clock::now();  // UDP viewers get a second to read it (udp_quiet)
  load_timer_.cancel();                                  // nothing to put any more
  if (membership_) membership_->withdraw();              // no new client is sent here; the connected ones drain
  drain_timer_ = reactor_.at(std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                    std::chrono::duration<double>(config_.drain_seconds)),
                             [this] { on_drain_deadline(); });
  log::info("server", "stopping: new connections are refused; " + std::to_string(vod_.connections()) +
                          " connected client(s) may read for up to " + std::to_string(static_cast<int>(config_.drain_seconds)) + " s");
  vod_.begin_drain();
  live_.begin_drain();  // a live stream never ends by itself: its viewers are disconnected now
}

bool VodServer::udp_quiet() {
  // Write-Record sessions have no connection to wait for: a draining server stays until it sent what
  // was asked and no request came for a second (its viewers read the drain in the status words and
  // went), or the drain ends.
  if (!udp_) return true;
  const auto now = std::chrono::steady_clock::now();
  if (const std::uint64_t n = udp_->stats().requests; n != udp_requests_seen_) {
    udp_requests_seen_ = n;
    udp_last_request_ = now;
  }
  return udp_->jobs() == 0 && now - udp_last_request_ >= std::chrono::seconds(1);
}

void VodServer::on_signal(int signo) {
  if (signo == SIGHUP) rescan();
  else begin_drain();
}

void VodServer::on_drain_deadline() {
  log::info("server", "drain time is up: disconnecting " + std::to_string(clients()) + " client(s)");
  vod_.cut_off_all();
  live_.cut_off_all();
  stop_ = true;
}

int VodServer::run() {
  // Listening, with the library registered on every device: what Type=notify waits for.
  notifier_.ready(service_status());
  // Asleep until an event, a signal, a record, a completion or a deadline.
  while (!stop_ && !(draining_ && clients() == 0 && udp_quiet())) reactor_.run_once();
  live_.reap(true);
  vod_.reap_failed(true);
  if (udp_) {
    const auto& u = udp_->stats();
    log::info("udp", "served " + std::to_string(u.requests) + " requests and " + std::to_string(u.hellos) +
                         " hellos: " + std::to_string(u.datagrams) + " datagrams, " + std::to_string(u.bytes) + " bytes; " +
                         std::to_string(u.errors_sent) + " errors sent, " + std::to_string(u.bad_cookies) + " bad cookies, " +
                         std::to_string(u.dropped) + " dropped, " + std::to_string(u.superseded) + " superseded, " +
                         std::to_string(u.expired) + " expired at their deadline, " + std::to_string(u.clients_forgotten) +
                         " client addresses forgotten, " + std::to_string(u.test_dropped) + " dropped by the test hook");
  }
  log::info("server", "stopped");
  return 0;
}

}  // namespace vod::server
