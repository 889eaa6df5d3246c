// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod_server.hpp"

#include <ctime>

#include "udp/udp_regions.hpp"

#include <arpa/inet.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

#include "vod/log.hpp"
#include "vod/rdma/error.hpp"

namespace vod::server {

namespace {

std::string peer_of(rdma_cm_id* id) {
  const sockaddr* sa = rdma_get_peer_addr(id);
  char host[INET6_ADDRSTRLEN] = "?";
  if (sa->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, host, sizeof host);
  else if (sa->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(ntohs(rdma_get_dst_port(id)));
}

std::string seconds_since(std::chrono::steady_clock::time_point t) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}

}  // namespace

VodServer::DeviceList::~DeviceList() {
  if (list) rdma_free_devices(list);
}

namespace {
std::vector<live::ChannelConfig> live_channels(const ServerConfig& c) {
  std::vector<live::ChannelConfig> out;
  for (const auto& text : c.live) out.push_back(live::parse_channel(text));
  return out;
}

live::LiveOptions live_options(const ServerConfig& c) {
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
  return o;
}
}  // namespace

VodServer::VodServer(ServerConfig config)
    : config_(std::move(config)),
      source_limits_({config_.connect_rate, config_.connect_burst, config_.max_per_source}),
      completions_(reactor_, hub_),
      live_(reactor_, completions_, live_channels(config_), live_options(config_)) {
  if (!config_.auth_secret.empty()) load_auth_keys();
  if (!config_.revoked.empty()) load_revocations();
  library_options_.remux_ts = config_.remux == "ts";
  for (const auto& c : config_.live) library_options_.reserved_names.insert(live::parse_channel(c).name);
  if (!config_.no_rdma) rdma::require_device();
  if (config_.test_fail_binds) {
    windows::RdmaWindowVerbs::fail_every(config_.test_fail_binds);
    log::warn("auth", "--test-fail-binds " + std::to_string(config_.test_fail_binds) + ": window binds fail on purpose (a test hook)");
  }

  // Signals arrive through a signalfd, so the event loop sleeps in one epoll_wait for everything.
  signals_.emplace(reactor_, std::initializer_list<int>{SIGTERM, SIGINT, SIGHUP}, [this](int signo) { on_signal(signo); });

  library_ = scan_library(config_.media_dir, 1, nullptr, library_options_);
  if (config_.udp_port) {
    udp::UdpOptions o;
    o.bind = config_.bind;
    o.port = config_.udp_port;
    o.max_rate_bps = config_.udp_max_rate_mbps * 1e6;
    o.client_rate_bps = config_.udp_client_rate_mbps * 1e6;
    o.max_payload = config_.udp_max_payload;
    if (!config_.udp_test_drop.empty()) {
      o.test_drop = udp::parse_test_drop(config_.udp_test_drop);
      log::warn("udp", "--udp-test-drop " + config_.udp_test_drop + ": dropping datagrams on purpose (a test hook)");
    }
    udp_ = std::make_unique<udp::UdpService>(o);
  }
  if (!config_.no_rdma) {
    listener_ = std::make_unique<rdma::Listener>(config_.bind == "0.0.0.0" ? "" : config_.bind, config_.port, config_.backlog);
    open_devices();
  } else {
    publish_generation(std::move(library_));
  }
  // After sigprocmask above: the endpoint's thread inherits the blocked signals, so SIGTERM still
  // reaches the signalfd.
  if (config_.metrics_port)
    metrics_endpoint_ = std::make_unique<MetricsEndpoint>(config_.metrics_bind, config_.metrics_port, [this] { return metrics_.render(); });
  if (metrics_endpoint_ && udp_) metrics_.set_udp(udp_->stats());
  register_fds();
  completions_.after_poll([this] { reap_failed(); });
  live_.start();
  log::info("server", "listening on " + config_.bind + ":" + (listener_ ? std::to_string(listener_->port()) : std::string("- (no RDMA)")) +
                          (udp_ ? ", UDP " + std::to_string(udp_->port()) : std::string()) + " with " + std::to_string(library_.movies.size()) +
                          " movies and " + std::to_string(config_.live.size()) + " live channels, at most " + std::to_string(config_.max_clients) +
                          " clients");
}

VodServer::~VodServer() { connections_.clear(); }

void VodServer::register_fds() {
  if (listener_) in_loop_.push_back(reactor_.add(listener_->events().fd(), [this] { on_cm_events(); }));
  if (udp_) {
    in_loop_.push_back(reactor_.add(udp_->socket_fd(), [this] {
      udp_->on_readable();
      udp_served_ = true;
    }));
    in_loop_.push_back(reactor_.add(udp_->timer_fd(), [this] {
      udp_->on_timer();
      udp_served_ = true;
    }));
  }
  // Connects and disconnects are the only events that change the client counts: rare, O(clients).
  reactor_.after_turn([this] {
    if (std::exchange(counts_changed_, false)) {
      if (metrics_endpoint_) update_connection_metrics();
      if (notifier_.active()) notifier_.status(service_status());
    }
    if (std::exchange(udp_served_, false) && metrics_endpoint_) metrics_.set_udp(udp_->stats());
  });
}

void VodServer::on_cm_events() {
  while (auto event = listener_->events().next(std::chrono::milliseconds(0))) {
    try {
      handle(*event);
    } catch (const std::exception& e) {
      log::error("server", std::string("while handling ") + event->type_name() + ": " + e.what());
    }
  }
  counts_changed_ = true;
}

loop::Reactor::Timer VodServer::expiry_timer(rdma_cm_id* id, const auth::Grant& grant) {
  if (!grant.deadline()) return {};
  return reactor_.at(*grant.deadline(), [this, id] { on_token_expired(id); });
}

void VodServer::publish_generation(Library next) {
  std::map<ibv_context*, std::shared_ptr<CatalogRegistration>> registered;
  for (auto& [ctx, device] : devices_) registered[ctx] = register_library(device, next, live_.catalog_entries(ctx));
  // Connections keep the generation they were accepted with; new ones get this one.
  current_ = std::move(registered);
  if (udp_) udp_->publish(udp::udp_regions(next, live_.catalog_entries(nullptr)));
  library_ = std::move(next);
  update_catalog_metrics();
}

void VodServer::update_catalog_metrics() {
  metrics_.set_catalog(library_.generation, library_.movies.size(), config_.live.size());
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

void VodServer::update_connection_metrics() {
  ServerMetrics::ConnectionCounts counts;
  for (const auto& [id, c] : connections_) ++counts[{c->kind, c->movie}];
  for (const auto& [channel, n] : live_.viewers_by_channel()) counts[{"live", channel}] = n;
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
    // Windows go with authorization: they bound what a token grants to the client's own QP.
    const bool want_windows = !config_.auth_secret.empty() && !config_.no_memory_windows;
    const rdma::DeviceLimits limits = rdma::query_limits(ctx, port);
    const bool windows = want_windows && limits.type2_windows && !limits.iwarp;
    if (want_windows && !windows)
      log::warn("auth", "device " + name + (limits.iwarp ? " is iWARP (its QPs reach RTS inside the accept, too late to bind a window first)"
                                                          : " has no type-2 memory windows") +
                            ": serving the shared regions' rkeys instead, the weaker mode: a client that learns an rkey can read that region "
                            "from any connection until the server restarts (docs/security.md)");
    if (want_windows && windows) log::info("auth", "device " + name + ": a memory window per connection, bound to its QP (max_mw " + std::to_string(limits.max_mw) + ")");
    if (!want_windows && !config_.auth_secret.empty())
      log::warn("auth", "--no-memory-windows: serving the shared regions' rkeys, the weaker mode (docs/security.md)");
    auto device = std::make_shared<Device>(ctx, port, windows);
    device_ports_[ctx] = port;
    log::info("server", "device " + name + (device->limits.iwarp ? " (iWARP)" : "") + ": max_qp_rd_atom " +
                            std::to_string(device->limits.max_qp_rd_atom) + ", max_msg_size " + std::to_string(device->limits.max_msg_size) +
                            ", active MTU " + std::to_string(device->limits.active_mtu_bytes));
    completions_.add_device(ctx);  // the device's CQ, and its channel in the loop, before any QP
    live_.register_device(device);
    devices_[ctx] = std::move(device);
  }
  publish_generation(std::move(library_));
  if (devices_.empty()) {
    if (!config_.device.empty())
      throw rdma::NoDeviceError("--device " + config_.device + " is not an RDMA device this listener can use (found: " +
                                (names.empty() ? "none" : names) + ")");
    throw rdma::NoDeviceError("no RDMA device behind " + config_.bind);
  }
}

void VodServer::refuse(rdma::CmEvent& event, const std::string& peer, proto::RejectCode code, const std::string& reason) {
  log::info("server", "reject " + peer + ": " + proto::to_string(code) + ": " + reason);
  metrics_.count_reject(code);
  const auto data = proto::encode_reject(code, reason);
  if (int err = rdma::reject(event.id(), data)) log::warn("server", "rdma_reject to " + peer + " failed: " + std::strerror(err));
  event.release();  // before the caller's CmIdHandle destroys the id
}

void VodServer::on_connect_request(rdma::CmEvent& event) {
  rdma_cm_id* id = event.id();
  rdma::CmIdHandle owned(id);  // ours from here; destroyed (after the event is acknowledged) unless kept
  const std::string peer = peer_of(id);
  auto current = current_.find(id->verbs);
  if (current == current_.end())
    return refuse(event, peer, proto::RejectCode::internal_error, "this server does not serve on device " + rdma::device_name(id->verbs));
  const CatalogRegistration& catalog = *current->second;
  AdmissionState state{catalog.catalog, clients(), config_.max_clients, draining_};
  state.peer = auth::address_of(rdma_get_peer_addr(id));
  if (auth_) {
    state.auth = &*auth_;
    state.now_unix = static_cast<std::uint64_t>(std::time(nullptr));
  }
  if (revoked_) state.revoked = &*revoked_;
  state.over_connect_rate = !source_limits_.allow_connect(state.peer, std::chrono::steady_clock::now());
  state.connect_rate = source_limits_.settings().connects_per_second;
  state.from_source = source_limits_.connections(state.peer);
  state.max_per_source = source_limits_.settings().max_connections;
  const Admission decision = admit(event.private_data(), state);
  if (const auto* no = std::get_if<Refuse>(&decision)) {
    log::info("server", "connect from " + peer + ": " + std::to_string(event.private_data().size()) + " bytes of private data");
    return refuse(event, peer, no->code, no->reason);
  }
  const Admit& yes = std::get<Admit>(decision);
  log::info("server", "connect from " + peer + ": " + describe(yes, catalog.catalog));
  // Counted against its address from here; given back when whatever ends up owning it goes (this
  // frame, if the setup below fails).
  auth::Grant grant(source_limits_, {state.peer, yes.token, peer}, static_cast<std::uint64_t>(std::time(nullptr)),
                    std::chrono::steady_clock::now());
  // The client's initiator_depth arrives as responder_resources in a CONNECT_REQUEST.
  const std::uint8_t depth = rdma::server_responder_resources(catalog.device->limits, event.conn().responder_resources);
  if (yes.kind == Admit::Kind::live) {
    try {
      live_.accept(owned, current->second, yes.entry, depth, peer, std::move(grant));
    } catch (const std::exception& e) {
      log::error("server", "cannot set up the live connection from " + peer + ": " + e.what());
      return refuse(event, peer, proto::RejectCode::internal_error, "the server could not set up the connection");
    }
    log::info("server", "accept " + peer + ": " + describe(yes, catalog.catalog) + ", read depth " + std::to_string(depth) + ", " +
                            std::to_string(clients()) + " connected");
    metrics_.count_accept("live");
    return;
  }
  accept_vod(event, owned, yes, peer, grant);
}

bool VodServer::accept_vod(rdma::CmEvent& event, rdma::CmIdHandle& owned, const Admit& admit, const std::string& peer, auth::Grant& grant) {
  rdma_cm_id* id = owned.get();
  const auto& current = current_.at(id->verbs);
  const Device& device = *current->device;
  const std::string what = describe(admit, current->catalog);
  proto::AcceptData accept = current->accept_for(admit.kind == Admit::Kind::movie ? admit.entry : proto::kNoMovie);
  const std::uint8_t depth = rdma::server_responder_resources(device.limits, event.conn().responder_resources);
  accept.granted_read_depth = depth;
  if (device.windows) {
    try {
      bind_windows(owned, admit, accept, depth, peer, grant);
    } catch (const std::exception& e) {  // the QP and windows (if any) are gone again; the id is still ours
      log::error("server", "cannot bind memory windows for " + peer + ": " + e.what());
      refuse(event, peer, proto::RejectCode::internal_error, "the server could not set up the connection");
      return false;
    }
    return true;
  }
  try {
    ibv_qp_init_attr attr{};
    // The hub's CQ, with nothing reserved on it: the server posts nothing on this QP (Reads are
    // answered by the responder), so nothing of it ever completes.
    attr.send_cq = hub_.reserve(id->verbs, 0);
    attr.recv_cq = attr.send_cq;
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = 1;
    attr.cap.max_recv_wr = 1;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    rdma::QueuePair qp(id, device.pd.get(), attr);
    rdma::accept(id, proto::encode(accept), depth);
    auto c = new_connection(current, admit, peer);
    c->qp = std::move(qp);
    c->id = std::move(owned);
    c->grant = std::move(grant);
    c->expiry = expiry_timer(id, c->grant);
    connections_.emplace(id, std::move(c));
  } catch (const std::exception& e) {  // the QP (if any) is gone again; the id is still ours
    log::error("server", "cannot set up the connection from " + peer + ": " + e.what());
    refuse(event, peer, proto::RejectCode::internal_error, "the server could not set up the connection");
    return false;
  }
  log::info("server", "accept " + peer + ": " + what + ", generation " + std::to_string(accept.catalog_generation) + ", read depth " +
                          std::to_string(depth) + " (asked " + std::to_string(event.conn().responder_resources) + "), " +
                          std::to_string(clients()) + " connected");
  metrics_.count_accept(admit.kind == Admit::Kind::movie ? "movie" : "catalog");
  return true;
}

std::unique_ptr<VodServer::Connection> VodServer::new_connection(const std::shared_ptr<CatalogRegistration>& current, const Admit& admit,
                                                                  const std::string& peer) {
  auto c = std::make_unique<Connection>();
  const bool movie = admit.kind == Admit::Kind::movie;
  c->catalog = current;
  c->peer = peer;
  c->what = describe(admit, current->catalog);
  c->kind = movie ? "movie" : "catalog";
  if (movie) c->movie = current->catalog.entries.at(admit.entry).name;
  c->since = std::chrono::steady_clock::now();
  return c;
}

void VodServer::bind_windows(rdma::CmIdHandle& owned, const Admit& admit, proto::AcceptData accept, std::uint8_t depth, const std::string& peer,
                             auth::Grant& grant) {
  rdma_cm_id* id = owned.get();
  const auto& current = current_.at(id->verbs);
  Device& device = *current->device;
  if (binding_ >= kMaxBinding) throw std::runtime_error(std::to_string(binding_) + " clients are binding windows already");
  auto c = new_connection(current, admit, peer);
  // Room in the hub's CQ for everything its QP may complete: the binds (or a failed bind and the
  // flushes after it).
  constexpr std::uint32_t kSends = 4, kRecvs = 1;  // the binds: catalog, movie, index
  c->cq = rdma::CqShare(hub_, id->verbs, kSends + kRecvs);
  ibv_qp_init_attr attr{};
  attr.send_cq = c->cq.cq();
  attr.recv_cq = c->cq.cq();
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = kSends;
  attr.cap.max_recv_wr = kRecvs;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  c->own_qp = rdma::create_qp(device.pd.get(), attr);
  c->owner = rdma::HubOwner(hub_, [this, raw = c.get()](const ibv_wc& wc, rdma::WorkId wid) { on_bind_completion(*raw, wc, wid); });
  c->verbs.emplace(id, device.pd.get(), c->own_qp.get());
  c->windows.emplace(*c->verbs, device.rkeys);
  // Exactly what this client was granted: the catalog, and its movie with its index.
  std::vector<windows::WindowSpan> spans{{current->mr.get(), accept.catalog}};
  if (admit.kind == Admit::Kind::movie) {
    const MovieRegistration& m = *current->movies.at(admit.entry);
    spans.push_back({m.movie_mr.get(), accept.movie});
    spans.push_back({m.index_mr.get(), accept.index});
  }
  // Brings the QP to RTS and posts the binds. If that throws, nothing was posted (or the post
  // failed) and the connection goes with this frame, the id staying the caller's.
  const auto regions = c->windows->start(spans, depth, 7, rdma::WorkId{c->owner.id(), windows::kBindKind, 0}.pack());
  accept.catalog = regions[0];
  if (regions.size() == 3) {
    accept.movie = regions[1];
    accept.index = regions[2];
  }
  c->state = Connection::State::binding;
  c->binding = Counted(binding_);
  c->depth = depth;
  c->accept_data = proto::encode(accept);
  c->id = std::move(owned);
  c->grant = std::move(grant);
  c->expiry = expiry_timer(id, c->grant);
  connections_.emplace(id, std::move(c));
}

void VodServer::on_bind_completion(Connection& c, const ibv_wc& wc, rdma::WorkId wid) {
  if (wid.kind == kDrainKind) {
    c.drained = true;  // reaped after this poll
    return;
  }
  if (wid.kind != windows::kBindKind) {
    log::warn("server", c.peer + ": unexpected completion (kind " + std::to_string(wid.kind) + ", " + ibv_wc_status_str(wc.status) + ")");
    return;
  }
  if (c.state != Connection::State::binding) return;  // a late one (the connection failed meanwhile)
  counts_changed_ = true;
  if (c.windows->on_completion(wc.status) != windows::WindowBinding::State::bound) return drop_binding(c.id.get(), c.windows->failure());
  finish_accept(c);
}

void VodServer::finish_accept(Connection& c) {
  rdma_cm_id* id = c.id.get();
  try {
    rdma::accept_with_qp(id, c.own_qp.get(), c.accept_data, c.depth);
  } catch (const std::exception& e) {
    return drop_binding(id, e.what());
  }
  c.state = Connection::State::accepted;
  c.accept_data.clear();
  c.binding.reset();
  c.cq.reset();  // its binds have completed (the last one, signalled, after the others) and nothing more is posted
  const auto bind_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - c.since).count();
  log::info("server", "accept " + c.peer + ": " + c.what + ", generation " + std::to_string(c.catalog->catalog.generation) + ", read depth " +
                          std::to_string(c.depth) + ", " + std::to_string(c.windows->windows()) + " memory windows bound in " + std::to_string(bind_us) +
                          " us, " + std::to_string(clients()) + " connected");
  metrics_.count_accept(c.kind);
}

void VodServer::drop_binding(rdma_cm_id* id, const std::string& why) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;
  std::unique_ptr<Connection> c = std::move(it->second);
  connections_.erase(it);
  log::error("server", "cannot set up the connection from " + c->peer + ": " + why);
  metrics_.count_reject(proto::RejectCode::internal_error);
  rdma::reject(id, proto::encode_reject(proto::RejectCode::internal_error, "the server could not set up the connection"));
  // Given back now: the client is told no, whatever the QP still has to flush.
  c->grant.release();
  c->expiry.cancel();
  c->binding.reset();
  if (!c->own_qp) return;  // an rdma_cm QP that nothing was posted to: it goes now
  // Drain before destroy: windows freed, QP in the error state (the binding did both if it failed,
  // not if the accept did), then a signalled marker Send, which completes (as a flush) after every
  // work request posted before it. Its reservation in the hub's CQ stays until then.
  c->windows->invalidate();
  rdma::move_to_error(c->own_qp.get());
  c->drain_started = std::chrono::steady_clock::now();
  ibv_send_wr marker{};
  marker.wr_id = rdma::WorkId{c->owner.id(), kDrainKind, 0}.pack();
  marker.opcode = IBV_WR_SEND;
  marker.send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (ibv_post_send(c->own_qp.get(), &marker, &bad) != 0) c->drained = true;  // nothing can arrive for it
  failed_.push_back(std::move(c));
  // Looked at after every poll of the hub (the marker's completion) and every kReapEvery (the limit).
  if (!reap_timer_.armed()) reap_timer_ = reactor_.at(std::chrono::steady_clock::now() + kReapEvery, [this] { reap_failed(); });
}

void VodServer::reap_failed(bool force) {
  if (failed_.empty()) return;
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(failed_, [&](const std::unique_ptr<Connection>& c) {
    if (c->drained) return true;
    if (force || now - c->drain_started > kDrainLimit) {
      log::warn("server", c->peer + ": its work requests did not flush within " + std::to_string(kDrainLimit.count()) + " s; destroying its QP anyway");
      return true;
    }
    return false;
  });
  if (!failed_.empty() && !reap_timer_.armed()) reap_timer_ = reactor_.at(now + kReapEvery, [this] { reap_failed(); });
}

void VodServer::cut_off(rdma_cm_id* id) {
  if (live_.cut_off(id)) return;
  auto it = connections_.find(id);
  if (it != connections_.end() && it->second->own_qp) {
    it->second->windows->invalidate();  // their rkeys fail from now on, before any message
    rdma::move_to_error(it->second->own_qp.get());
  }
  rdma_disconnect(id);  // an rdma_cm QP goes to error here; its DISCONNECTED event releases the rest
}

void VodServer::handle(rdma::CmEvent& event) {
  rdma_cm_id* id = event.id();
  switch (event.type()) {
    case RDMA_CM_EVENT_CONNECT_REQUEST:
      on_connect_request(event);
      return;
    default:
      break;
  }
  if (live_.on_cm_event(event)) return;  // one of the live module's viewers
  switch (event.type()) {
    case RDMA_CM_EVENT_ESTABLISHED:
      if (auto it = connections_.find(id); it != connections_.end()) log::debug("server", "established " + it->second->peer);
      return;
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT: {
      auto it = connections_.find(id);
      if (it == connections_.end()) return;
      log::info("server", "disconnect " + it->second->peer + ": " + it->second->what + " after " + seconds_since(it->second->since) + " (" +
                              event.type_name() + "), " + std::to_string(clients() - 1) + " connected");
      std::unique_ptr<Connection> gone = std::move(it->second);
      connections_.erase(it);
      event.release();  // rdma_destroy_id waits for the ack; `gone` (QP, then cm_id) goes after it
      return;
    }
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      log::error("server", "an RDMA device was removed; stopping");
      stop_ = true;
      return;
    default:
      log::debug("server", std::string("event ") + event.type_name());
  }
}

ServiceStatus VodServer::service_status() const noexcept {
  return {clients(), library_.movies.size(), config_.live.size(), library_.generation};
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
  std::vector<std::pair<rdma_cm_id*, std::string>> gone;
  auto check = [&](rdma_cm_id* id, const auth::Grant& g) {
    if (auto why = revoked_->revoked(g.terms().token, g.terms().address)) gone.emplace_back(id, "disconnecting " + g.terms().peer + ": " + *why);
  };
  for (const auto& [id, c] : connections_) check(id, c->grant);
  live_.for_each_grant(check);
  for (const auto& [id, why] : gone) {
    log::warn("auth", why);
    cut_off(id);
  }
}

void VodServer::on_token_expired(rdma_cm_id* id) {
  auto it = connections_.find(id);
  if (it == connections_.end()) return;  // cannot happen: the timer goes with its connection
  log::info("auth", "disconnecting " + it->second->peer + ": its token expired (" + it->second->what + ")");
  if (it->second->state == Connection::State::binding) return drop_binding(id, "its token expired while its windows were being bound");
  cut_off(id);
}

void VodServer::rescan() {
  log::info("server", "SIGHUP: rescanning " + config_.media_dir);
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
  try {
    publish_generation(scan_library(config_.media_dir, library_.generation + 1, &library_, library_options_));
  } catch (const std::exception& e) {
    log::error("server", std::string("rescan failed, keeping generation ") + std::to_string(library_.generation) + ": " + e.what());
  }
  notifier_.ready(service_status());
}

void VodServer::begin_drain() {
  if (draining_) return;
  draining_ = true;
  notifier_.stopping();
  metrics_.set_draining();
  drain_timer_ = reactor_.at(std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                                    std::chrono::duration<double>(config_.drain_seconds)),
                             [this] { on_drain_deadline(); });
  log::info("server", "stopping: new connections are refused; " + std::to_string(connections_.size()) + " connected client(s) may read for up to " +
                          std::to_string(static_cast<int>(config_.drain_seconds)) + " s");
  // A live stream never ends by itself: its viewers are disconnected now.
  if (live_.viewers()) log::info("server", "disconnecting " + std::to_string(live_.viewers()) + " live viewer(s)");
  live_.disconnect_all();
}

void VodServer::on_signal(int signo) {
  if (signo == SIGHUP) rescan();
  else begin_drain();
}

void VodServer::on_drain_deadline() {
  log::info("server", "drain time is up: disconnecting " + std::to_string(clients()) + " client(s)");
  for (auto& [id, c] : connections_) cut_off(id);
  connections_.clear();
  live_.disconnect_all();
  stop_ = true;
}

int VodServer::run() {
  // Listening, with the library registered on every device: what Type=notify waits for.
  notifier_.ready(service_status());
  // Asleep until an event, a signal, a record, a completion or a deadline.
  while (!stop_ && !(draining_ && clients() == 0)) reactor_.run_once();
  live_.reap(true);
  reap_failed(true);
  if (udp_) {
    const auto& u = udp_->stats();
    log::info("udp", "served " + std::to_string(u.requests) + " requests and " + std::to_string(u.hellos) + " hellos: " +
                         std::to_string(u.datagrams) + " datagrams, " + std::to_string(u.bytes) + " bytes; " + std::to_string(u.errors_sent) +
                         " errors sent, " + std::to_string(u.bad_cookies) + " bad cookies, " + std::to_string(u.dropped) + " dropped, " +
                         std::to_string(u.superseded) + " superseded, " + std::to_string(u.expired) + " expired at their deadline, " +
                         std::to_string(u.clients_forgotten) + " client addresses forgotten, " + std::to_string(u.test_dropped) +
                         " dropped by the test hook");
  }
  log::info("server", "stopped");
  return 0;
}

}  // namespace vod::server
