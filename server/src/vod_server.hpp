// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's one event-loop thread, a loop::Reactor. Registered with it: the rdma_cm event
// channel, the signals (SIGTERM, SIGINT, SIGHUP through a signalfd), the channel of each device's
// CQ in the server's one CompletionHub (VoD window binds and live viewers share it), with
// --udp-port the UDP socket and its pacing timer, and the live module's eventfd. Deadlines are its
// timers: each connection's token expiry (owned by the connection), the drain's end, the live
// reaping.
//
// Each connect request goes through admit() (admission.hpp), then to its transport: VoD and
// catalog clients are accepted here with the regions' descriptors, and from then on their RDMA
// Reads are answered by the RNIC (or by the kernel, with Soft-RoCE) without this thread: per VoD
// client it keeps the QP, the cm_id and a reference to the catalog generation it was given.
// Live viewers belong to live::LiveService, which sends their notifications.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "admission.hpp"
#include "auth/grant.hpp"
#include "auth/source_limits.hpp"
#include "live/live_service.hpp"
#include "loop/completion_source.hpp"
#include "loop/reactor.hpp"
#include "loop/signal_source.hpp"
#include "metrics/metrics_endpoint.hpp"
#include "metrics/server_metrics.hpp"
#include "udp/udp_service.hpp"
#include "windows/connection_windows.hpp"
#include "windows/rdma_window_verbs.hpp"
#include "windows/window_binding.hpp"
#include "movie_library.hpp"
#include "registrations.hpp"
#include "service/service_notifier.hpp"
#include "server_config.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/cq_share.hpp"

namespace vod::server {

class VodServer {
 public:
  explicit VodServer(ServerConfig config);
  ~VodServer();
  // Serves until SIGTERM/SIGINT and the drain that follows; returns the exit status.
  int run();

 private:
  // One count held while it exists (the connections binding windows at once).
  class Counted {
   public:
    Counted() noexcept = default;
    explicit Counted(std::size_t& n) noexcept : n_(&n) { ++n; }
    Counted(Counted&& o) noexcept : n_(std::exchange(o.n_, nullptr)) {}
    Counted& operator=(Counted&& o) noexcept {
      if (this != &o) {
        reset();
        n_ = std::exchange(o.n_, nullptr);
      }
      return *this;
    }
    ~Counted() { reset(); }
    void reset() noexcept {
      if (n_) --*std::exchange(n_, nullptr);
    }

   private:
    std::size_t* n_ = nullptr;
  };

  // A VoD or catalog client. Without windows it is accepted at once (state accepted, an rdma_cm
  // QP). With windows: binding (its own QP in RTS, the binds posted, the accept waiting for their
  // completion, which the hub delivers to its owner id), then accepted; the windows go before the
  // QP at the end. A connection whose binding failed (or whose accept did) is rejected and drains:
  // its QP in the error state, a marker Send posted after everything else on it, and it is
  // destroyed once the marker's flush has completed (or after kDrainLimit).
  struct Connection {
    enum class State { binding, accepted };
    std::shared_ptr<CatalogRegistration> catalog;  // first: released after the QP and the id
    rdma::CmIdHandle id;
    rdma::CqShare cq;    // with windows, while binding: its binds' room in the hub's CQ; given back after the QP
    rdma::QueuePair qp;  // without windows
    std::string peer;
    std::string what;  // "movie 'x'" or "catalog"
    std::string kind;  // for metrics: "movie" or "catalog"
    std::string movie;  // the movie's name; empty for catalog clients
    std::chrono::steady_clock::time_point since;
    State state = State::accepted;
    std::uint8_t depth = 0;
    std::vector<std::uint8_t> accept_data{};  // while binding: the accept to send
    rdma::VerbsQueuePair own_qp{};          // with windows: the QP they are bound to
    std::optional<windows::RdmaWindowVerbs> verbs{};   // with windows: own_qp's, for the binding
    std::optional<windows::WindowBinding> windows{};   // invalidated before the QP goes
    rdma::HubOwner owner{};                 // with windows: where its binds' and drain marker's completions go
    bool drained = false;                   // draining: the marker's completion arrived
    std::chrono::steady_clock::time_point drain_started{};
    Counted binding{};                      // while binding: one of kMaxBinding
    auth::Grant grant{};                    // its address's count, its token and deadline: given back whichever way it ends
    loop::Reactor::Timer expiry{};          // at the grant's deadline: cut off (on_token_expired); goes with the connection
  };
  // Clients binding windows at once, at most: each could leave 3 completions (a failed bind and the
  // flushes after it) where 1024 fit (the window CQ this bound before the hub shared one).
  static constexpr std::size_t kMaxBinding = 341;
  // The kind of the marker Send posted to a failed connection's QP after it went to error.
  static constexpr std::uint8_t kDrainKind = 3;
  // How long a failed connection's QP may take to flush before it is destroyed anyway.
  static constexpr std::chrono::seconds kDrainLimit{5};
  static constexpr std::chrono::milliseconds kReapEvery{100};

  void open_devices();
  void publish_generation(Library next);
  void handle(rdma::CmEvent& event);
  void on_connect_request(rdma::CmEvent& event);
  // True when accepted (false: refused, the reason sent).
  bool accept_vod(rdma::CmEvent& event, rdma::CmIdHandle& id, const Admit& admit, const std::string& peer, auth::Grant& grant);
  // With windows: a QP of the server's own, brought to RTS, the windows bound; the accept follows
  // on the bind's completion (on_bind_completion).
  void bind_windows(rdma::CmIdHandle& owned, const Admit& admit, proto::AcceptData accept, std::uint8_t depth, const std::string& peer,
                    auth::Grant& grant);
  void on_bind_completion(Connection& c, const ibv_wc& wc, rdma::WorkId wid);
  std::unique_ptr<Connection> new_connection(const std::shared_ptr<CatalogRegistration>& current, const Admit& admit, const std::string& peer);
  void finish_accept(Connection& c);
  // Rejects a connection that cannot be set up (internal error): its grant given back now, its QP
  // (with windows) drained before it is destroyed.
  void drop_binding(rdma_cm_id* id, const std::string& why);
  // Destroys the failed connections whose QP has flushed (force: all, at exit).
  void reap_failed(bool force = false);
  // Cuts a VoD or catalog client off now: windows invalidated, QP to error, disconnect sent.
  void cut_off(rdma_cm_id* id);
  // A VoD or catalog client's token expired (its grant's deadline, its timer): cut it off.
  void on_token_expired(rdma_cm_id* id);
  // The timer of a connection's token expiry, if its grant has a deadline.
  loop::Reactor::Timer expiry_timer(rdma_cm_id* id, const auth::Grant& grant);
  void register_fds();
  void on_cm_events();
  void on_drain_deadline();
  void refuse(rdma::CmEvent& event, const std::string& peer, proto::RejectCode code, const std::string& reason);
  void rescan();
  void load_auth_keys();
  void load_revocations();
  void cut_off_revoked();
  void begin_drain();
  void on_signal(int signo);
  std::size_t clients() const noexcept { return connections_.size() + live_.viewers(); }
  ServiceStatus service_status() const noexcept;
  void update_connection_metrics();
  void update_catalog_metrics();

  ServerConfig config_;
  // First: everything below that holds a registration or a timer goes before it.
  loop::Reactor reactor_;
  // Before any thread is started (the metrics endpoint's, the live sources'): they inherit the mask.
  std::optional<loop::SignalSource> signals_;
  std::optional<auth::TokenAuthority> auth_;  // with --auth-secret
  std::optional<auth::RevocationList> revoked_;  // with --revoked
  auth::SourceLimits source_limits_;
  LibraryOptions library_options_;
  Library library_;
  std::unique_ptr<rdma::Listener> listener_;
  struct DeviceList {
    ibv_context** list = nullptr;
    ~DeviceList();
  } rdma_devices_;  // the contexts librdmacm opened; freed after everything registered on them
  std::map<ibv_context*, std::shared_ptr<Device>> devices_;
  std::map<ibv_context*, std::uint8_t> device_ports_;  // the port each device serves on (metrics)
  // One CQ per device for every QP that posts (VoD window binds, live viewers), after the devices and
  // before everything that makes QPs; its channels in the loop (before the hub: they leave it first).
  rdma::CompletionHub hub_;
  loop::CompletionSource completions_;
  live::LiveService live_;  // after the devices: its registrations go before their PDs
  ServiceNotifier notifier_;
  std::map<ibv_context*, std::shared_ptr<CatalogRegistration>> current_;  // per device: the generation new clients get
  // VoD and catalog clients; on the heap, so their hub owners' handlers can name them.
  std::unordered_map<rdma_cm_id*, std::unique_ptr<Connection>> connections_;
  std::size_t binding_ = 0;  // of them, binding windows
  std::vector<std::unique_ptr<Connection>> failed_;  // rejected; destroyed once their QPs have flushed
  loop::Reactor::Timer reap_timer_;                 // armed while failed_ is not empty
  std::unique_ptr<udp::UdpService> udp_;  // Write-Record over UDP, when --udp-port is given
  ServerMetrics metrics_;
  std::unique_ptr<MetricsEndpoint> metrics_endpoint_;  // after metrics_: stopped before it goes; null when off
  // The listener's and the UDP fds in the loop: removed before those fds close.
  std::vector<loop::Reactor::Registration> in_loop_;
  loop::Reactor::Timer drain_timer_;  // the drain's end, after SIGTERM
  bool draining_ = false;
  bool stop_ = false;
  bool counts_changed_ = false;  // a connect, disconnect or accept: metrics and status after the turn
  bool udp_served_ = false;      // the UDP side ran: its counters after the turn
};

}  // namespace vod::server
