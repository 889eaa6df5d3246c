// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/rdma/connector.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "vod/rdma/error.hpp"
#include "vod/rdma/startup_trace.hpp"

namespace vod::rdma {

namespace trace = startup_trace;

namespace {
constexpr int kIbCmRejInvalidServiceId = 8;  // IB CM REJ reason: no listener on that service ID

// A numeric IPv4 or IPv6 address as a sockaddr in `out`, or null for anything else (a name). A
// numeric host needs no resolver: rdma_getaddrinfo costs a fresh process's first open about a
// millisecond (it loads its own configuration) for what inet_pton does.
sockaddr* numeric_address(const std::string& host, std::uint16_t port, sockaddr_storage& out) noexcept {
  auto* v4 = reinterpret_cast<sockaddr_in*>(&out);
  if (inet_pton(AF_INET, host.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    return reinterpret_cast<sockaddr*>(v4);
  }
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&out);
  if (inet_pton(AF_INET6, host.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    return reinterpret_cast<sockaddr*>(v6);
  }
  return nullptr;
}
}  // namespace

bool ConnectRejected::no_listener() const noexcept { return status_ == kIbCmRejInvalidServiceId; }

const char* to_string(ConnectState s) noexcept {
  switch (s) {
    case ConnectState::resolving_address: return "resolving the address";
    case ConnectState::resolving_route: return "resolving the route";
    case ConnectState::connecting: return "connecting";
    case ConnectState::established: return "established";
    case ConnectState::failed: return "failed";
  }
  return "?";
}

ConnectStep connect_transition(ConnectState state, rdma_cm_event_type event) noexcept {
  if (state == ConnectState::established || state == ConnectState::failed) return {state, ConnectAction::none};
  if (event == RDMA_CM_EVENT_REJECTED) return {ConnectState::failed, ConnectAction::fail_rejected};
  switch (state) {
    case ConnectState::resolving_address:
      if (event == RDMA_CM_EVENT_ADDR_RESOLVED) return {ConnectState::resolving_route, ConnectAction::resolve_route};
      break;
    case ConnectState::resolving_route:
      if (event == RDMA_CM_EVENT_ROUTE_RESOLVED) return {ConnectState::connecting, ConnectAction::create_qp_and_connect};
      break;
    case ConnectState::connecting:
      if (event == RDMA_CM_EVENT_ESTABLISHED) return {ConnectState::established, ConnectAction::take_accept};
      break;
    default: break;
  }
  return {ConnectState::failed, ConnectAction::fail_event};
}

Connector::Connector(ConnectOptions o) : options_(std::move(o)), target_(options_.host + ":" + std::to_string(options_.port)) {
  if (!options_.hub) throw std::invalid_argument("rdma::Connector: ConnectOptions::hub is required (the CQ the QP completes on)");
  // No device check up front: librdmacm lists the devices itself when the channel is made, and a
  // list of our own first (ibv_get_device_list) cost a fresh process's first open a second sysfs
  // and netlink scan (3-4 ms in the Soft-RoCE guest). The list is taken only to explain a failure.
  try {
    ep_ = std::make_unique<ClientEndpoint>();
    ep_->id = create_id(ep_->events, nullptr);
    trace::mark("event channel and cm_id (librdmacm's init: the device list)");
    sockaddr_storage numeric{};
    sockaddr* destination = numeric_address(options_.host, options_.port, numeric);
    std::unique_ptr<rdma_addrinfo, decltype(&rdma_freeaddrinfo)> info(nullptr, rdma_freeaddrinfo);
    if (!destination) {  // a name (or a scoped IPv6 address): librdmacm's resolver
      rdma_addrinfo hints{};
      hints.ai_port_space = RDMA_PS_TCP;
      rdma_addrinfo* res = nullptr;
      const std::string service = std::to_string(options_.port);
      if (rdma_getaddrinfo(options_.host.c_str(), service.c_str(), &hints, &res) != 0)
        throw ConnectFailed("cannot resolve " + target_ + ": " + std::strerror(errno));
      info.reset(res);
      destination = info->ai_dst_addr;
      trace::mark("rdma_getaddrinfo");
    }
    if (rdma_resolve_addr(ep_->id.get(), nullptr, destination, static_cast<int>(options_.timeout.count())) != 0)
      throw_errno("rdma_resolve_addr", "", "resolving " + target_);
    trace::mark("rdma_resolve_addr returned");
  } catch (...) {
    require_device();  // with no device at all, that is what to say (NoDeviceError)
    throw;
  }
  deadline_ = Clock::now() + options_.timeout;
}

int Connector::fd() const noexcept { return ep_ ? ep_->events.fd() : -1; }

std::string Connector::step_text() const {
  switch (state_) {
    case ConnectState::resolving_address:
      return "resolving " + target_ + " to an RDMA device (is the address on an RDMA-capable interface?)";
    case ConnectState::resolving_route: return "resolving the route to " + target_;
    default: return "connecting to " + target_;
  }
}

void Connector::fail(std::exception_ptr e) noexcept {
  if (state_ == ConnectState::resolving_address) {
    try {  // an address that resolves to no device because there is none: say that instead
      require_device();
    } catch (const NoDeviceError&) {
      e = std::current_exception();
    } catch (...) {}
  }
  error_ = std::move(e);
  state_ = ConnectState::failed;
  ep_.reset();  // QP, PD and cm_id go now: nothing is left half set up
}

std::optional<CmEvent> Connector::poll_event() noexcept {
  try {
    return ep_->events.next(std::chrono::milliseconds(0));
  } catch (...) {
    fail(std::current_exception());
    return std::nullopt;
  }
}

ConnectState Connector::step(Clock::time_point now) {
  while (state_ != ConnectState::established && state_ != ConnectState::failed) {
    std::optional<CmEvent> e = poll_event();
    if (state_ == ConnectState::failed) break;
    if (!e) {
      if (now >= deadline_)
        fail(
            std::make_exception_ptr(ConnectFailed(step_text() + ": no answer within " + std::to_string(options_.timeout.count()) + " ms")));
      break;
    }
    if (trace::enabled()) trace::mark(std::string("event ") + e->type_name() + " taken");
    const ConnectStep next = connect_transition(state_, e->type());
    std::exception_ptr failure;
    try {
      act(next.action, *e);
    } catch (...) {
      failure = std::current_exception();
    }
    e->release();  // acknowledged before fail() may destroy the cm_id (rdma_destroy_id waits for the ack)
    if (failure) {
      fail(failure);
      break;
    }
    state_ = next.next;
    deadline_ = Clock::now() + options_.timeout;  // the next step's
  }
  return state_;
}

void Connector::act(ConnectAction action, CmEvent& e) {
  switch (action) {
    case ConnectAction::none: return;
    case ConnectAction::resolve_route:
      if (rdma_resolve_route(ep_->id.get(), static_cast<int>(options_.timeout.count())) != 0)
        throw_errno("rdma_resolve_route", device_name(ep_->id->verbs), "routing to " + target_);
      trace::mark("rdma_resolve_route returned");
      return;
    case ConnectAction::create_qp_and_connect: create_qp_and_connect(); return;
    case ConnectAction::take_accept: {
      auto pd = e.private_data();
      ep_->accept_data.assign(pd.begin(), pd.end());
      ibv_qp_attr attr{};
      ibv_qp_init_attr init{};
      if (ibv_query_qp(ep_->qp.get(), &attr, IBV_QP_TIMEOUT, &init) == 0) ep_->qp_ack_timeout = attr.timeout;
      return;
    }
    case ConnectAction::fail_rejected: {
      auto pd = e.private_data();
      const int status = e.status();
      std::string what = step_text() + ": rejected by the peer (CM status " + std::to_string(status) + ")";
      if (status == kIbCmRejInvalidServiceId) what = step_text() + ": nothing listens there (connection refused)";
      throw ConnectRejected(what, status, {pd.begin(), pd.end()});
    }
    case ConnectAction::fail_event:
      throw ConnectFailed(step_text() + ": " + e.type_name() + " (status " + std::to_string(e.status()) + ": " +
                          std::strerror(std::abs(e.status())) + ")");
  }
}

void Connector::create_qp_and_connect() {
  ClientEndpoint& ep = *ep_;
  const ConnectOptions& o = options_;
  ibv_context* ctx = ep.id->verbs;
  ep.limits = query_limits(ctx, ep.id->port_num);
  ep.initiator_depth = client_initiator_depth(ep.limits, o.wanted_read_depth);
  trace::mark("query_limits (ibv_query_device, ibv_query_port)");
  ep.pd = alloc_pd(ctx);
  trace::mark("PD");
  const std::uint32_t sq = std::max(1u, std::min(o.send_queue_depth, ep.limits.max_qp_wr));
  const std::uint32_t rq = std::max(1u, std::min(o.recv_queue_depth, ep.limits.max_qp_wr));
  ep.cq.cq = o.hub->reserve(ctx, sq + rq);
  ep.cq.hub = o.hub;
  ep.cq.context = ctx;
  ep.cq.entries = sq + rq;
  trace::mark("CQ (the hub's share: its channel and CQ at the first)");
  ibv_qp_init_attr attr{};
  attr.send_cq = ep.cq.cq;
  attr.recv_cq = ep.cq.cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = sq;
  attr.cap.max_recv_wr = rq;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = o.recv_queue_depth ? 64 : 0;  // credit messages go inline where the device allows
  attr.sq_sig_all = 0;
  try {
    ep.qp = QueuePair(ep.id.get(), ep.pd.get(), attr);
  } catch (const RdmaError&) {
    if (attr.cap.max_inline_data == 0) throw;
    attr.cap.max_inline_data = 0;  // a device without inline data: sends come from registered memory
    ep.qp = QueuePair(ep.id.get(), ep.pd.get(), attr);
  }
  ep.max_inline_data = attr.cap.max_inline_data;
  trace::mark("QP");

  rdma_conn_param param{};
  param.private_data = o.private_data.data();
  param.private_data_len = static_cast<std::uint8_t>(o.private_data.size());
  param.initiator_depth = ep.initiator_depth;
  param.responder_resources = 0;  // nobody reads from a client
  param.retry_count = 7;
  param.rnr_retry_count = 7;
  if (o.ack_timeout && ep.id->verbs->device->transport_type != IBV_TRANSPORT_IWARP) {
    std::uint8_t t = o.ack_timeout;
    if (rdma_set_option(ep.id.get(), RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &t, sizeof t) != 0)
      throw_errno("rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)", ep.limits.name, "connecting to " + target_);
  }
  if (rdma_connect(ep.id.get(), &param) != 0) {
    // iWARP connects over TCP inside rdma_connect: nobody listening is its ECONNREFUSED, not a
    // REJECTED event as on IB and RoCE. The same failure, said the same way.
    if (errno == ECONNREFUSED)
      throw ConnectRejected(step_text() + ": nothing listens there (connection refused)", kIbCmRejInvalidServiceId, {});
    throw_errno("rdma_connect", ep.limits.name, "connecting to " + target_);
  }
  trace::mark("rdma_connect returned");
  if (o.while_connecting) {
    o.while_connecting(ep);
    trace::mark("while_connecting returned");
  }
}

std::unique_ptr<ClientEndpoint> Connector::take() {
  if (state_ != ConnectState::established) return nullptr;
  return std::move(ep_);
}

void Connector::rethrow() const {
  if (error_) std::rethrow_exception(error_);
  throw std::logic_error(std::string("rdma::Connector::rethrow while ") + to_string(state_));
}

}  // namespace vod::rdma
