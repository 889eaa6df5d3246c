// SPDX-License-Identifier: LGPL-2.1-or-later
// Opening and answering rdma_cm connections: the active side's connect (resolve address, route,
// create the QP, connect with private data) and the passive side's listener, accept and reject.
// Policy (what to ask for, whom to accept) stays with server/ and client/.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/device.hpp"
#include "vod/rdma/handles.hpp"

namespace vod::rdma {

// The peer answered the connect request with a reject (status is the CM's reason; private data is
// the peer's, which may be empty when no listener was there).
class ConnectRejected : public std::runtime_error {
 public:
  ConnectRejected(const std::string& what, int status, std::vector<std::uint8_t> private_data)
      : std::runtime_error(what), status_(status), private_data_(std::move(private_data)) {}
  int status() const noexcept { return status_; }
  const std::vector<std::uint8_t>& private_data() const noexcept { return private_data_; }
  // True when nobody listens on that port (IB CM "invalid service ID"): an unreachable server.
  bool no_listener() const noexcept;

 private:
  int status_;
  std::vector<std::uint8_t> private_data_;
};

// Address or route resolution failed, the peer did not answer, or the connection timed out.
class ConnectFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ClientEndpoint;

struct ConnectOptions {
  std::string host;
  std::uint16_t port = 0;
  std::vector<std::uint8_t> private_data;
  unsigned wanted_read_depth = 16;  // capped by the device; the server may grant less
  std::uint32_t send_queue_depth = 64;
  std::uint32_t recv_queue_depth = 0;  // receives this side posts (live notifications); 0: none
  std::chrono::milliseconds timeout{5000};
  // The QP's local ACK timeout, 4.096 us × 2^ack_timeout per try (7 retries), rdma_cm's
  // RDMA_OPTION_ID_ACK_TIMEOUT: how soon a Read to a peer that vanished fails. 0: rdma_cm's default,
  // derived from the path (on RoCE about 2 s a try: a dead server is noticed after some 17 s).
  // iWARP has no such timer (TCP's own applies): there the option is not set.
  std::uint8_t ack_timeout = 0;
  // Where the QP's completions go: the CQ of this hub for the device the route resolves to. The hub
  // must outlive the endpoint.
  CompletionHub* hub = nullptr;
  // Runs once the connect request is on its way (the endpoint's PD and QP exist), before waiting
  // for the answer: setup that needs only the PD, such as registering the memory Reads will land
  // in, then overlaps the round trip instead of following it. It may throw; the endpoint is then
  // torn down and the exception propagates.
  std::function<void(ClientEndpoint&)> while_connecting;
};

// One connected RC endpoint on the active side. Members are declared in creation order, so they are
// destroyed in reverse: QP, its share of the hub's CQ, local MRs, PD, cm_id, event channel, and last
// the memory those MRs cover that the endpoint was given to keep.
struct ClientEndpoint {
  // Buffers under MRs in `memory` whose users may go before the endpoint (a reader destroyed while
  // its Reads and receives are still posted): freed only once the QP and every MR are gone, so a
  // Read that lands late lands in memory nobody else has.
  std::vector<std::shared_ptr<void>> pinned;
  EventChannel events;
  CmIdHandle id;
  ProtectionDomain pd;
  std::vector<MemoryRegion> memory;  // local MRs this QP uses: they go after the QP, before the PD
  struct CqShare {                   // the QP's reservation on the hub's shared CQ
    CompletionHub* hub = nullptr;
    ibv_context* context = nullptr;
    std::uint32_t entries = 0;
    ibv_cq* cq = nullptr;
    CqShare() = default;
    CqShare(const CqShare&) = delete;
    CqShare& operator=(const CqShare&) = delete;
    ~CqShare() {
      if (hub) hub->release(cq, entries);
    }
  } cq;
  QueuePair qp;
  DeviceLimits limits;
  std::uint8_t initiator_depth = 0;       // what this side asked for
  std::uint32_t max_inline_data = 0;      // what the QP was created with
  std::vector<std::uint8_t> accept_data;  // the peer's accept private data, copied
  // The QP's local ACK timeout exponent as the device holds it once connected (ibv_query_qp):
  // what ConnectOptions::ack_timeout asked for, or rdma_cm's default. 0 on iWARP (TCP's timer).
  std::uint8_t qp_ack_timeout = 0;

  ClientEndpoint() = default;
  ClientEndpoint(const ClientEndpoint&) = delete;
  ClientEndpoint& operator=(const ClientEndpoint&) = delete;
  ~ClientEndpoint();  // disconnects first, so the peer sees a clean DISCONNECTED
};

// Connects; throws ConnectRejected, ConnectFailed, NoDeviceError or RdmaError.
std::unique_ptr<ClientEndpoint> connect(const ConnectOptions& options);

// "537 ms a try" for exponent 17 (4.096 us × 2^exponent); "TCP's" for an iWARP endpoint.
std::string ack_timeout_text(const ClientEndpoint& ep);

// A listening cm_id with its own event channel.
class Listener {
 public:
  // Binds host:port (an empty host or "0.0.0.0" binds every address; port 0 picks a free port).
  Listener(const std::string& host, std::uint16_t port, int backlog);
  std::uint16_t port() const;
  EventChannel& events() noexcept { return events_; }
  rdma_cm_id* id() const noexcept { return id_.get(); }

 private:
  EventChannel events_;
  CmIdHandle id_;
};

// Accept with private data, granting `responder_resources` outstanding Reads and issuing none.
// `rnr_retry_count` bounds how often this side's Sends are retried while the peer has no receive
// posted (7 = for ever; the VoD path sends nothing).
void accept(rdma_cm_id* id, std::span<const std::uint8_t> private_data, std::uint8_t responder_resources, std::uint8_t rnr_retry_count = 7);

// The passive side with a QP of its own (rdma::create_qp, not rdma_create_qp): moves `qp` through
// INIT, RTR and RTS with the attributes rdma_cm computed from the connect request (what rdma_accept
// does for an rdma_cm QP), so that work requests can run on it before the accept is sent. The QP
// allows remote Reads only, at most `responder_resources` at once, and issues none; its Sends are
// retried `rnr_retry_count` times while the peer has no receive posted (7 = for ever). IB and RoCE
// only: on iWARP the QP reaches RTS inside the accept.
void bring_up_passive_qp(rdma_cm_id* id, ibv_qp* qp, std::uint8_t responder_resources, std::uint8_t rnr_retry_count = 7);
// Accepts for such a QP, naming it by number. rdma_cm then leaves the QP's state to its owner: at
// disconnect, move it to the error state yourself (move_to_error).
void accept_with_qp(rdma_cm_id* id, const ibv_qp* qp, std::span<const std::uint8_t> private_data, std::uint8_t responder_resources,
                    std::uint8_t rnr_retry_count = 7);
// Moves a QP to the error state: it answers no more Reads. Returns errno, or 0.
int move_to_error(ibv_qp* qp) noexcept;
// Reject with private data; failures are returned as errno (the peer may already be gone).
int reject(rdma_cm_id* id, std::span<const std::uint8_t> private_data) noexcept;

}  // namespace vod::rdma
