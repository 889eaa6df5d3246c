// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cm/admitter.hpp"

#include <arpa/inet.h>

#include <chrono>
#include <cstring>
#include <ctime>

#include "auth/client_address.hpp"
#include "vod/log.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/device.hpp"

namespace vod::server::cm {

std::string peer_of(rdma_cm_id* id) {
  const sockaddr* sa = rdma_get_peer_addr(id);
  char host[INET6_ADDRSTRLEN] = "?";
  if (sa->sa_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, host, sizeof host);
  else if (sa->sa_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(ntohs(rdma_get_dst_port(id)));
}

void Admitter::refuse(rdma::CmEvent& event, const std::string& peer, proto::RejectCode code, const std::string& reason) {
  log::info("server", "reject " + peer + ": " + proto::to_string(code) + ": " + reason);
  metrics_.count_reject(code);
  const auto data = proto::encode_reject(code, reason);
  if (int err = rdma::reject(event.id(), data)) log::warn("server", "rdma_reject to " + peer + " failed: " + std::strerror(err));
  event.release();  // before the caller's CmIdHandle destroys the id
}

void Admitter::on_connect_request(rdma::CmEvent& event) {
  rdma_cm_id* id = event.id();
  rdma::CmIdHandle owned(id);  // ours from here; destroyed (after the event is acknowledged) unless a transport keeps it
  const std::string peer = peer_of(id);
  auto current = policy_.current.find(id->verbs);
  if (current == policy_.current.end())
    return refuse(event, peer, proto::RejectCode::internal_error, "this server does not serve on device " + rdma::device_name(id->verbs));
  const CatalogRegistration& catalog = *current->second;
  auth::SourceLimits& limits = policy_.source_limits;
  AdmissionState state{catalog.catalog, clients_(), policy_.max_clients, policy_.draining};
  state.peer = auth::address_of(rdma_get_peer_addr(id));
  if (policy_.auth) {
    state.auth = &*policy_.auth;
    state.now_unix = static_cast<std::uint64_t>(std::time(nullptr));
  }
  if (policy_.revoked) state.revoked = &*policy_.revoked;
  state.over_connect_rate = !limits.allow_connect(state.peer, std::chrono::steady_clock::now());
  state.connect_rate = limits.settings().connects_per_second;
  state.from_source = limits.connections(state.peer);
  state.max_per_source = limits.settings().max_connections;
  const Admission decision = admit(event.private_data(), state);
  if (const auto* no = std::get_if<Refuse>(&decision)) {
    log::info("server", "connect from " + peer + ": " + std::to_string(event.private_data().size()) + " bytes of private data");
    return refuse(event, peer, no->code, no->reason);
  }
  const Admit& yes = std::get<Admit>(decision);
  log::info("server", "connect from " + peer + ": " + describe(yes, catalog.catalog));
  Transport* transport = transports_[static_cast<std::size_t>(yes.kind)];
  if (!transport)
    return refuse(event, peer, proto::RejectCode::internal_error, "this server has no transport for " + describe(yes, catalog.catalog));
  // Counted against its address from here; given back when whatever ends up owning it goes (this
  // frame, if the setup fails).
  auth::Grant grant(limits, {state.peer, yes.token, peer}, static_cast<std::uint64_t>(std::time(nullptr)),
                    std::chrono::steady_clock::now());
  // The client's initiator_depth arrives as responder_resources in a CONNECT_REQUEST.
  const std::uint8_t depth = rdma::server_responder_resources(catalog.device->limits, event.conn().responder_resources);
  try {
    transport->accept(Accepting{owned, event.conn(), current->second, yes, peer, depth, std::move(grant)});
  } catch (const SetupRefused& e) {
    log::warn("server", "refused " + peer + ": " + e.what());
    return refuse(event, peer, e.code, e.what());
  } catch (const std::exception& e) {  // whatever it made is gone again; the id is still ours
    log::error("server", "cannot set up the connection from " + peer + ": " + e.what());
    return refuse(event, peer, proto::RejectCode::internal_error, "the server could not set up the connection");
  }
}

}  // namespace vod::server::cm
