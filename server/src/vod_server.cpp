#include "vod_server.hpp"

#include <arpa/inet.h>
#include <poll.h>
#include <sys/signalfd.h>
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

VodServer::VodServer(ServerConfig config) : config_(std::move(config)) {
  library_options_.remux_ts = config_.remux == "ts";
  rdma::require_device();

  // Signals arrive through a signalfd, so the event loop sleeps in one poll() for everything.
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set, s);
  if (sigprocmask(SIG_BLOCK, &set, nullptr) != 0) throw std::runtime_error(std::string("sigprocmask: ") + std::strerror(errno));
  signal_fd_ = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
  if (signal_fd_ < 0) throw std::runtime_error(std::string("signalfd: ") + std::strerror(errno));

  library_ = scan_library(config_.media_dir, 1, nullptr, library_options_);
  listener_ = std::make_unique<rdma::Listener>(config_.bind == "0.0.0.0" ? "" : config_.bind, config_.port, config_.backlog);
  open_devices();
  log::info("server", "listening on " + config_.bind + ":" + std::to_string(listener_->port()) + " with " +
                          std::to_string(library_.movies.size()) + " movies, at most " + std::to_string(config_.max_clients) + " clients");
}

VodServer::~VodServer() {
  connections_.clear();
  if (signal_fd_ >= 0) close(signal_fd_);
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
    auto device = std::make_shared<Device>(ctx, listener_->id()->port_num ? listener_->id()->port_num : 1);
    log::info("server", "device " + name + (device->limits.iwarp ? " (iWARP)" : "") + ": max_qp_rd_atom " +
                            std::to_string(device->limits.max_qp_rd_atom) + ", max_msg_size " + std::to_string(device->limits.max_msg_size) +
                            ", active MTU " + std::to_string(device->limits.active_mtu_bytes));
    current_[ctx] = register_library(device, library_);
    devices_[ctx] = std::move(device);
  }
  if (devices_.empty()) {
    if (!config_.device.empty())
      throw rdma::NoDeviceError("--device " + config_.device + " is not an RDMA device this listener can use (found: " +
                                (names.empty() ? "none" : names) + ")");
    throw rdma::NoDeviceError("no RDMA device behind " + config_.bind);
  }
}

void VodServer::refuse(rdma::CmEvent& event, const std::string& peer, proto::RejectCode code, const std::string& reason) {
  log::info("server", "reject " + peer + ": " + proto::to_string(code) + ": " + reason);
  const auto data = proto::encode(proto::RejectData{code, proto::kMinProtocolVersion, proto::kProtocolVersion, reason});
  if (int err = rdma::reject(event.id(), data)) log::warn("server", "rdma_reject to " + peer + " failed: " + std::strerror(err));
  event.release();  // before the caller's CmIdHandle destroys the id
}

void VodServer::on_connect_request(rdma::CmEvent& event) {
  rdma_cm_id* id = event.id();
  rdma::CmIdHandle owned(id);  // ours from here; destroyed (after the event is acknowledged) unless kept
  const std::string peer = peer_of(id);
  auto request = proto::decode_connect_request(event.private_data());
  if (!request) {
    log::info("server", "connect from " + peer + ": " + std::to_string(event.private_data().size()) + " bytes of private data");
    return refuse(event, peer, proto::reject_code_for(request.error()), request.error().message);
  }
  std::string asked = "catalog";
  if (request->kind != proto::RequestKind::catalog_only) {
    char selector[64];
    std::snprintf(selector, sizeof selector, "%s %s 0x%016llx", request->kind == proto::RequestKind::movie ? "movie" : "stream",
                  request->selector_type == proto::SelectorType::name_hash ? "hash" : "index",
                  static_cast<unsigned long long>(request->selector));
    asked = selector;
  }
  log::info("server", "connect from " + peer + ": " + asked);
  auto current = current_.find(id->verbs);
  if (current == current_.end())
    return refuse(event, peer, proto::RejectCode::internal_error, "this server does not serve on device " + rdma::device_name(id->verbs));
  const CatalogRegistration& catalog = *current->second;

  std::uint32_t index = proto::kNoMovie;
  std::string what = "catalog";
  switch (request->kind) {
    case proto::RequestKind::catalog_only:
      break;
    case proto::RequestKind::movie: {
      if (request->selector_type == proto::SelectorType::catalog_index) {
        if (request->catalog_generation != catalog.catalog.generation)
          return refuse(event, peer, proto::RejectCode::stale_catalog,
                        "catalog generation " + std::to_string(request->catalog_generation) + " is gone; the current one is " +
                            std::to_string(catalog.catalog.generation) + ": reconnect for the catalog");
        if (request->selector >= catalog.catalog.entries.size())
          return refuse(event, peer, proto::RejectCode::unknown_movie, "catalog index " + std::to_string(request->selector) + " is past the " +
                                                                        std::to_string(catalog.catalog.entries.size()) + " entries");
        index = static_cast<std::uint32_t>(request->selector);
      } else {
        const auto& entries = catalog.catalog.entries;
        const proto::CatalogEntry* e = catalog.catalog.find_hash(request->selector);
        if (!e) {
          std::string names;
          for (const auto& x : entries) {
            if (names.size() + x.name.size() + 2 > 80) {
              names += ", ...";
              break;
            }
            names += (names.empty() ? "" : ", ") + x.name;
          }
          return refuse(event, peer, proto::RejectCode::unknown_movie,
                        "no such movie; " + std::to_string(entries.size()) + " movies: " + (names.empty() ? "(none)" : names));
        }
        index = static_cast<std::uint32_t>(e - entries.data());
      }
      what = "movie '" + catalog.catalog.entries[index].name + "'";
      break;
    }
    case proto::RequestKind::live:
    case proto::RequestKind::write_record:
      return refuse(event, peer, proto::RejectCode::unsupported_kind, "this server serves movies and the catalog only (no live source, no Write-Record)");
  }
  if (draining_) return refuse(event, peer, proto::RejectCode::shutting_down, "the server is shutting down");
  if (connections_.size() >= config_.max_clients)
    return refuse(event, peer, proto::RejectCode::server_full, std::to_string(connections_.size()) + " clients connected, the limit is " +
                                                                 std::to_string(config_.max_clients) + "; try later");

  const Device& device = *catalog.device;
  proto::AcceptData accept = catalog.accept_for(index);
  // The client's initiator_depth arrives as responder_resources in a CONNECT_REQUEST.
  const std::uint8_t depth = rdma::server_responder_resources(device.limits, event.conn().responder_resources);
  accept.granted_read_depth = depth;
  try {
    ibv_qp_init_attr attr{};
    attr.send_cq = device.cq.get();
    attr.recv_cq = device.cq.get();
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = 1;  // the server posts nothing: Reads are answered by the responder
    attr.cap.max_recv_wr = 1;
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    Connection c{current->second, std::move(owned), rdma::QueuePair(id, device.pd.get(), attr), peer, what, std::chrono::steady_clock::now()};
    rdma::accept(id, proto::encode(accept), depth);
    connections_.emplace(id, std::move(c));
  } catch (const std::exception& e) {
    log::error("server", "cannot set up the connection from " + peer + ": " + e.what());
    return refuse(event, peer, proto::RejectCode::internal_error, "the server could not set up the connection");
  }
  log::info("server", "accept " + peer + ": " + what + ", generation " + std::to_string(accept.catalog_generation) + ", read depth " +
                          std::to_string(depth) + " (asked " + std::to_string(event.conn().responder_resources) + "), " +
                          std::to_string(connections_.size()) + " connected");
}

void VodServer::handle(rdma::CmEvent& event) {
  rdma_cm_id* id = event.id();
  switch (event.type()) {
    case RDMA_CM_EVENT_CONNECT_REQUEST:
      on_connect_request(event);
      return;
    case RDMA_CM_EVENT_ESTABLISHED:
      if (auto it = connections_.find(id); it != connections_.end()) log::debug("server", "established " + it->second.peer);
      return;
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT: {
      auto it = connections_.find(id);
      if (it == connections_.end()) return;
      log::info("server", "disconnect " + it->second.peer + ": " + it->second.what + " after " + seconds_since(it->second.since) + " (" +
                              event.type_name() + "), " + std::to_string(connections_.size() - 1) + " connected");
      Connection gone = std::move(it->second);
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

void VodServer::rescan() {
  log::info("server", "SIGHUP: rescanning " + config_.media_dir);
  try {
    Library next = scan_library(config_.media_dir, library_.generation + 1, &library_, library_options_);
    std::map<ibv_context*, std::shared_ptr<CatalogRegistration>> registered;
    for (auto& [ctx, device] : devices_) registered[ctx] = register_library(device, next);
    // Connections keep the generation they were accepted with; new ones get this one.
    current_ = std::move(registered);
    library_ = std::move(next);
  } catch (const std::exception& e) {
    log::error("server", std::string("rescan failed, keeping generation ") + std::to_string(library_.generation) + ": " + e.what());
  }
}

void VodServer::begin_drain() {
  if (draining_) return;
  draining_ = true;
  drain_deadline_ = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                           std::chrono::duration<double>(config_.drain_seconds));
  log::info("server", "stopping: new connections are refused; " + std::to_string(connections_.size()) + " connected client(s) may read for up to " +
                          std::to_string(static_cast<int>(config_.drain_seconds)) + " s");
}

bool VodServer::handle_signals() {
  signalfd_siginfo info{};
  while (read(signal_fd_, &info, sizeof info) == static_cast<ssize_t>(sizeof info)) {
    if (info.ssi_signo == SIGHUP) rescan();
    else begin_drain();
  }
  return true;
}

int VodServer::run() {
  while (!stop_) {
    if (draining_) {
      if (connections_.empty()) break;
      if (std::chrono::steady_clock::now() >= drain_deadline_) {
        log::info("server", "drain time is up: disconnecting " + std::to_string(connections_.size()) + " client(s)");
        for (auto& [id, c] : connections_) rdma_disconnect(id);
        connections_.clear();
        break;
      }
    }
    pollfd fds[2] = {{listener_->events().fd(), POLLIN, 0}, {signal_fd_, POLLIN, 0}};
    int timeout = -1;  // asleep until a connection event or a signal
    if (draining_)
      timeout = static_cast<int>(std::max<long>(
          1, std::chrono::duration_cast<std::chrono::milliseconds>(drain_deadline_ - std::chrono::steady_clock::now()).count()));
    const int n = poll(fds, 2, timeout);
    if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (n <= 0) continue;
    if (fds[1].revents & POLLIN) handle_signals();
    if (fds[0].revents & POLLIN) {
      while (auto event = listener_->events().next(std::chrono::milliseconds(0))) {
        try {
          handle(*event);
        } catch (const std::exception& e) {
          log::error("server", std::string("while handling ") + event->type_name() + ": " + e.what());
        }
      }
    }
  }
  log::info("server", "stopped");
  return 0;
}

}  // namespace vod::server
