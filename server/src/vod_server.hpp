// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-server's composition: what it is made of, in which order, and its policy for signals, the
// rescan, authorization keys and revocations, the drain, and metrics. Everything else has a module:
//
//   loop::Reactor              the one event loop (epoll, timers): every fd and deadline
//   loop::SignalSource         SIGTERM, SIGINT, SIGHUP
//   cm::CmDispatcher           the listener's rdma_cm events, each routed once (cm::Routes)
//   cm::Admitter               a connect request: the pure admit(), then the chosen transport
//   ondemand::VodTransport     movie and catalog clients (VodConnection, with its state machine)
//   live::Channels             live channels: rings, sources, registrations
//   live::LiveTransport        live viewers (Viewer, its send state machine)
//   udp::UdpService            Write-Record over UDP
//   rdma::CompletionHub        one CQ per device for every QP that posts (loop::CompletionSource)
//   cache::SegmentCache        with --cache-size: the arena, its slots and the disk reads
//
// Ownership, teardown and the connection state diagram: docs/design.md.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "auth/revocation_list.hpp"
#include "auth/source_limits.hpp"
#include "auth/token_authority.hpp"
#include "cache/cache_reader.hpp"
#include "cache/lazy_indexer.hpp"
#include "cache/segment_cache.hpp"
#include "cm/admitter.hpp"
#include "cm/cm_dispatcher.hpp"
#include "cm/routes.hpp"
#include "fleet/load_estimate.hpp"
#include "fleet/member_registration.hpp"
#include "fleet/status_words.hpp"
#include "live/channels.hpp"
#include "live/live_transport.hpp"
#include "loop/completion_source.hpp"
#include "loop/reactor.hpp"
#include "loop/signal_source.hpp"
#include "metrics/metrics_endpoint.hpp"
#include "metrics/server_metrics.hpp"
#include "movie_library.hpp"
#include "ondemand/vod_transport.hpp"
#include "origin/origin_rescanner.hpp"
#include "registrations.hpp"
#include "server_config.hpp"
#include "service/service_notifier.hpp"
#include "titles/library_titles.hpp"
#include "udp/udp_service.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/connection.hpp"

namespace vod::server {

class VodServer {
 public:
  explicit VodServer(ServerConfig config);
  ~VodServer();
  // Serves until SIGTERM/SIGINT and the drain that follows; returns the exit status.
  int run();

 private:
  void open_devices();
  void start_udp();
  void install_test_hooks();
  // Registers `library`'s catalog on every device and offers it over UDP; throws what a
  // registration throws, before anything changed.
  void offer(Library& library);  // groups its titles (library.titles), then registers and publishes it
  void publish_generation(Library next);
  // The current generation registered again, with what the LazyIndexer found since (movies probed
  // after start, content identities): at most once a second (the timer below).
  void republish();
  void rescan();
  // The media directory scanned again and published (SIGHUP's, and after --live-record's files).
  void scan_media();
  // The library at start: the media directory's, or the origin's (an origin that cannot be listed
  // leaves it empty, and it is listed again in 5 s).
  Library first_scan();
  // --origin: lists the origin again on its thread within a second (SIGHUP, a fill that found a
  // change, the --origin-rescan period), unless a listing is under way.
  void rescan_soon(std::chrono::seconds after = std::chrono::seconds(1));
  void origin_scanned(std::optional<Library> library, const std::string& error);
  void load_auth_keys();
  void load_revocations();
  void cut_off_revoked();
  void begin_drain();
  void on_drain_deadline();
  void on_signal(int signo);
  std::size_t clients() const noexcept { return vod_.connections() + live_.connections(); }
  ServiceStatus service_status() const noexcept;
  void update_connection_metrics();
  void update_live_metrics();
  void update_catalog_metrics();
  cluster::MemberRecord member_record() const;  // --cluster: what etcd says about this server now
  void measure_load();                          // --cluster, every second: Write-Record's rate, and the record if it changed
  void test_evict();
  void beat();
  bool
  udp_quiet();  // draining: no Write-Record request for a second  // the status words' heartbeat, every proto::kHeartbeatPeriodMs from start

  // Declared in the order they are made; destroyed in reverse. The reactor first: everything that
  // holds a registration or a timer goes before it.
  ServerConfig config_;
  loop::Reactor reactor_;
  // Before any thread is started (the metrics endpoint's, the live sources'): they inherit the mask.
  std::optional<loop::SignalSource> signals_;
  ServerMetrics metrics_;                        // before the transports, which count into it
  std::optional<auth::TokenAuthority> auth_;     // with --auth-secret
  std::optional<auth::RevocationList> revoked_;  // with --revoked
  auth::SourceLimits source_limits_;
  LibraryOptions library_options_;
  // With --cache-size: before the devices (whose MRs cover its arena) and the connections.
  std::unique_ptr<cache::SegmentCache> cache_;
  std::optional<windows::SlotWatchers> slot_watchers_;  // with a cache: windows over its slots (tokens), freed at a refill
  windows::PinnedBudget pinned_;                        // --isolation pd: what connections' own registrations pin (--isolation-memory)
  std::optional<cache::IndexStore> index_store_;        // with a cache: --state-dir
  std::optional<cache::CacheReader> cache_reader_;      // --origin: the indexer reads MPEG-TS through the cache
  std::unique_ptr<cache::LazyIndexer> indexer_;         // with a cache: indexes built after start
  Library library_;
  titles::LibraryTitles titles_;
  std::unique_ptr<rdma::Listener> listener_;
  struct DeviceList {
    ibv_context** list = nullptr;
    ~DeviceList();
  } rdma_devices_;  // the contexts librdmacm opened; freed after everything registered on them
  std::map<ibv_context*, std::shared_ptr<Device>> devices_;
  std::map<ibv_context*, std::uint8_t> device_ports_;  // the port each device serves on (metrics)
  // One CQ per device for every QP that posts (VoD window binds, live viewers): after the devices,
  // before everything that makes QPs; its channels in the loop.
  rdma::CompletionHub hub_;
  loop::CompletionSource completions_;
  cm::Routes routes_;         // before the connections, whose routes it holds
  live::Channels channels_;   // after the devices: its registrations go before their PDs
  live::LiveTransport live_;  // after the channels: its viewers' QPs go before the rings' MRs
  ondemand::VodTransport vod_;
  ServiceNotifier notifier_;
  fleet::StatusWords status_;                                             // before the catalogs it writes into (it only watches them)
  std::map<ibv_context*, std::shared_ptr<CatalogRegistration>> current_;  // per device: the generation new clients get
  std::unique_ptr<udp::UdpService> udp_;                                  // Write-Record over UDP, when --udp-port is given
  std::optional<cm::Admitter> admitter_;                                  // with RDMA
  std::optional<cm::CmDispatcher> dispatcher_;                            // with RDMA: the listener's channel in the loop
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;                     // after metrics_: stopped before it goes; null when off
  std::vector<loop::Reactor::Registration> udp_in_loop_;                  // the UDP socket and timer: removed before they close
  std::unique_ptr<fleet::MemberRegistration> membership_;                 // --cluster: after everything its record describes
  loop::Reactor::Timer drain_timer_;                                      // the drain's end, after SIGTERM
  loop::Reactor::Timer test_evict_timer_;                                 // --test-evict-every
  std::unique_ptr<origin::OriginRescanner> origin_scans_;                 // --origin: listings after start
  loop::Reactor::Timer origin_timer_;                                     // --origin: the next listing
  std::chrono::steady_clock::time_point origin_due_{};
  bool origin_again_ = false;             // a listing was asked for while one was under way: another follows it at once
  loop::Reactor::Timer republish_timer_;  // identities found: the catalog again, within a second
  loop::Reactor::Timer recorded_timer_;   // recordings completed or deleted: a scan within a second
  loop::Reactor::Timer heartbeat_timer_;  // the status words' heartbeat
  loop::Reactor::Timer load_timer_;       // --cluster: the load measured, the record put if it changed
  std::chrono::steady_clock::time_point load_measured_at_;
  std::uint64_t udp_bytes_measured_ = 0;
  double udp_served_mbps_ = 0;
  std::uint64_t udp_requests_seen_ = 0;                     // udp_quiet()
  std::size_t udp_sessions_recorded_ = 0;                   // in the record last handed to membership_
  std::chrono::steady_clock::time_point udp_last_request_;  // Write-Record's bytes over the last second, for the record
  bool draining_ = false;
  bool stop_ = false;
  bool counts_changed_ = false;  // a connect, disconnect or accept: metrics and status after the turn
  bool udp_served_ = false;      // the UDP side ran: its counters after the turn
};

}  // namespace vod::server
