// SPDX-License-Identifier: LGPL-2.1-or-later
// What happens to a CONNECT_REQUEST: the server's state gathered into an AdmissionState (the
// generation of the request's device, the client counts, the limits of its address, the keys and
// revocations, draining), the pure admit() (admission.hpp) asked, then either a reject with its
// code and reason or a Grant and the chosen transport's accept(). The request's id is owned by this
// frame until a transport keeps it; a transport that throws gets the request rejected
// (internal_error) and the id destroyed here, after the event is acknowledged.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "admission.hpp"
#include "auth/revocation_list.hpp"
#include "auth/source_limits.hpp"
#include "auth/token_authority.hpp"
#include "cm/transport.hpp"
#include "metrics/server_metrics.hpp"
#include "registrations.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/handles.hpp"

namespace vod::server::cm {

// "host:port" of an id's peer.
std::string peer_of(rdma_cm_id* id);

class Admitter {
 public:
  // What admission decides from: references into the server, read at each request.
  struct Policy {
    unsigned max_clients = 0;
    auth::SourceLimits& source_limits;
    const std::optional<auth::TokenAuthority>& auth;
    const std::optional<auth::RevocationList>& revoked;
    const bool& draining;
    const std::map<ibv_context*, std::shared_ptr<CatalogRegistration>>& current;  // per device: the generation new clients get
  };

  Admitter(Policy policy, ServerMetrics& metrics, std::function<std::size_t()> clients)
      : policy_(policy), metrics_(metrics), clients_(std::move(clients)) {}
  void set_transport(Admit::Kind kind, Transport& transport) { transports_[static_cast<std::size_t>(kind)] = &transport; }
  void on_connect_request(rdma::CmEvent& event);

 private:
  void refuse(rdma::CmEvent& event, const std::string& peer, proto::RejectCode code, const std::string& reason);

  Policy policy_;
  ServerMetrics& metrics_;
  std::function<std::size_t()> clients_;
  std::array<Transport*, 3> transports_{};  // by Admit::Kind: catalog, movie, live
};

}  // namespace vod::server::cm
