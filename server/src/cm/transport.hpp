// SPDX-License-Identifier: LGPL-2.1-or-later
// A transport of rdma_cm connections (VoD and catalog clients: ondemand::VodTransport; live
// viewers: live::LiveTransport): it accepts what admission admitted and owns each connection from
// there, with its grant, its token's timer, its QP and its route.
#pragma once

#include <rdma/rdma_cma.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "admission.hpp"
#include "auth/grant.hpp"
#include "metrics/server_metrics.hpp"
#include "registrations.hpp"
#include "vod/rdma/handles.hpp"

namespace vod::server::cm {

// An admitted connect request, handed to its transport.
struct Accepting {
  rdma::CmIdHandle& id;                          // taken by the transport once it keeps the connection; the caller's if accept throws
  const rdma_conn_param& conn;                   // the request's (its responder_resources is the client's initiator depth)
  std::shared_ptr<CatalogRegistration> catalog;  // the generation it gets (the device's current one)
  Admit admit;
  std::string peer;        // "host:port"
  std::uint8_t depth = 0;  // the Reads in flight granted
  auth::Grant grant;       // counted against its address; goes with the connection
};

// Thrown by a transport that refuses a connection it could set up only by breaking a promise (its
// isolation, a limit): the connect is rejected with this code and reason, not internal_error.
struct SetupRefused : std::runtime_error {
  proto::RejectCode code;
  SetupRefused(proto::RejectCode c, const std::string& reason) : std::runtime_error(reason), code(c) {}
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Sets the connection up and answers it (or starts to: a window binding answers on completion).
  // Throws SetupRefused to reject with a reason, any other std::exception when it cannot: the
  // caller rejects with internal_error.
  virtual void accept(Accepting a) = 0;
  virtual std::size_t connections() const noexcept = 0;
  // Cuts off every connection for which `why` gives a reason (revocation), logging it.
  virtual void cut_off_if(const std::function<std::optional<std::string>(const auth::Grant&)>& why) = 0;
  // SIGTERM: what this transport does when the server starts to drain.
  virtual void begin_drain() = 0;
  // The drain's end: every connection cut off now.
  virtual void cut_off_all() = 0;
  virtual void count(ServerMetrics::ConnectionCounts& counts) const = 0;
};

}  // namespace vod::server::cm
