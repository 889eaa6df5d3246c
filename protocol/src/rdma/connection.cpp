#include "vod/rdma/connection.hpp"

#include <netdb.h>

#include <algorithm>

#include <cerrno>
#include <cstring>

#include "vod/rdma/error.hpp"

namespace vod::rdma {

namespace {

constexpr int kIbCmRejInvalidServiceId = 8;  // IB CM REJ reason: no listener on that service ID

// Waits for the event that ends one step of connection setup, on `id`, and checks its type.
CmEvent expect_event(EventChannel& events, rdma_cm_event_type wanted, std::chrono::milliseconds timeout,
                     const std::string& step) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw ConnectFailed(step + ": no answer within " + std::to_string(timeout.count()) + " ms");
    auto e = events.next(left);
    if (!e) continue;
    if (e->type() == wanted) return std::move(*e);
    if (e->type() == RDMA_CM_EVENT_REJECTED) {
      auto pd = e->private_data();
      const int status = e->status();
      std::string what = step + ": rejected by the peer (CM status " + std::to_string(status) + ")";
      if (status == kIbCmRejInvalidServiceId) what = step + ": nothing listens there (connection refused)";
      throw ConnectRejected(what, status, {pd.begin(), pd.end()});
    }
    throw ConnectFailed(step + ": " + e->type_name() + " (status " + std::to_string(e->status()) + ": " +
                        std::strerror(std::abs(e->status())) + ")");
  }
}

}  // namespace

bool ConnectRejected::no_listener() const noexcept { return status_ == kIbCmRejInvalidServiceId; }

ClientEndpoint::~ClientEndpoint() {
  if (id && qp) rdma_disconnect(id.get());
}

std::unique_ptr<ClientEndpoint> connect(const ConnectOptions& o) {
  if (!o.hub) throw std::invalid_argument("rdma::connect: ConnectOptions::hub is required (the CQ the QP completes on)");
  require_device();
  auto ep = std::make_unique<ClientEndpoint>();
  ep->id = create_id(ep->events, nullptr);
  const std::string target = o.host + ":" + std::to_string(o.port);

  rdma_addrinfo hints{};
  hints.ai_port_space = RDMA_PS_TCP;
  rdma_addrinfo* res = nullptr;
  const std::string service = std::to_string(o.port);
  if (rdma_getaddrinfo(o.host.c_str(), service.c_str(), &hints, &res) != 0)
    throw ConnectFailed("cannot resolve " + target + ": " + std::strerror(errno));
  std::unique_ptr<rdma_addrinfo, decltype(&rdma_freeaddrinfo)> info(res, rdma_freeaddrinfo);
  const int ms = static_cast<int>(o.timeout.count());
  if (rdma_resolve_addr(ep->id.get(), nullptr, info->ai_dst_addr, ms) != 0)
    throw_errno("rdma_resolve_addr", "", "resolving " + target);
  expect_event(ep->events, RDMA_CM_EVENT_ADDR_RESOLVED, o.timeout,
               "resolving " + target + " to an RDMA device (is the address on an RDMA-capable interface?)");
  if (rdma_resolve_route(ep->id.get(), ms) != 0) throw_errno("rdma_resolve_route", device_name(ep->id->verbs), "routing to " + target);
  expect_event(ep->events, RDMA_CM_EVENT_ROUTE_RESOLVED, o.timeout, "resolving the route to " + target);

  ibv_context* ctx = ep->id->verbs;
  ep->limits = query_limits(ctx, ep->id->port_num);
  ep->initiator_depth = client_initiator_depth(ep->limits, o.wanted_read_depth);
  ep->pd = alloc_pd(ctx);
  const std::uint32_t sq = std::max(1u, std::min(o.send_queue_depth, ep->limits.max_qp_wr));
  const std::uint32_t rq = std::max(1u, std::min(o.recv_queue_depth, ep->limits.max_qp_wr));
  ep->cq.cq = o.hub->reserve(ctx, sq + rq);
  ep->cq.hub = o.hub;
  ep->cq.context = ctx;
  ep->cq.entries = sq + rq;
  ibv_qp_init_attr attr{};
  attr.send_cq = ep->cq.cq;
  attr.recv_cq = ep->cq.cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = sq;
  attr.cap.max_recv_wr = rq;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = o.recv_queue_depth ? 64 : 0;  // credit messages go inline where the device allows
  attr.sq_sig_all = 0;
  try {
    ep->qp = QueuePair(ep->id.get(), ep->pd.get(), attr);
  } catch (const RdmaError&) {
    if (attr.cap.max_inline_data == 0) throw;
    attr.cap.max_inline_data = 0;  // a device without inline data: sends come from registered memory
    ep->qp = QueuePair(ep->id.get(), ep->pd.get(), attr);
  }
  ep->max_inline_data = attr.cap.max_inline_data;

  rdma_conn_param param{};
  param.private_data = o.private_data.data();
  param.private_data_len = static_cast<std::uint8_t>(o.private_data.size());
  param.initiator_depth = ep->initiator_depth;
  param.responder_resources = 0;  // nobody reads from a client
  param.retry_count = 7;
  param.rnr_retry_count = 7;
  if (rdma_connect(ep->id.get(), &param) != 0) throw_errno("rdma_connect", ep->limits.name, "connecting to " + target);
  if (o.while_connecting) o.while_connecting(*ep);
  auto established = expect_event(ep->events, RDMA_CM_EVENT_ESTABLISHED, o.timeout, "connecting to " + target);
  auto pd = established.private_data();
  ep->accept_data.assign(pd.begin(), pd.end());
  return ep;
}

Listener::Listener(const std::string& host, std::uint16_t port, int backlog) : id_(create_id(events_, nullptr)) {
  rdma_addrinfo hints{};
  hints.ai_flags = RAI_PASSIVE;
  hints.ai_port_space = RDMA_PS_TCP;
  rdma_addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const char* node = host.empty() ? nullptr : host.c_str();
  if (rdma_getaddrinfo(node, service.c_str(), &hints, &res) != 0)
    throw ConnectFailed("cannot resolve listen address " + host + ":" + service + ": " + std::strerror(errno));
  std::unique_ptr<rdma_addrinfo, decltype(&rdma_freeaddrinfo)> info(res, rdma_freeaddrinfo);
  if (rdma_bind_addr(id_.get(), info->ai_src_addr) != 0)
    throw_errno("rdma_bind_addr", device_name(id_->verbs), "binding " + host + ":" + service);
  if (rdma_listen(id_.get(), backlog) != 0) throw_errno("rdma_listen", device_name(id_->verbs), "listening on " + host + ":" + service);
}

std::uint16_t Listener::port() const { return ntohs(rdma_get_src_port(id_.get())); }

void accept(rdma_cm_id* id, std::span<const std::uint8_t> private_data, std::uint8_t responder_resources, std::uint8_t rnr_retry_count) {
  rdma_conn_param param{};
  param.private_data = private_data.data();
  param.private_data_len = static_cast<std::uint8_t>(private_data.size());
  param.responder_resources = responder_resources;
  param.initiator_depth = 0;  // the server never issues Reads
  param.retry_count = 7;
  param.rnr_retry_count = rnr_retry_count;
  if (rdma_accept(id, &param) != 0) throw_errno("rdma_accept", device_name(id->verbs), "accepting a connection");
}

void bring_up_passive_qp(rdma_cm_id* id, ibv_qp* qp, std::uint8_t responder_resources, std::uint8_t rnr_retry_count) {
  const std::string device = device_name(id->verbs);
  const struct Step {
    ibv_qp_state state;
    const char* name;
  } steps[] = {{IBV_QPS_INIT, "INIT"}, {IBV_QPS_RTR, "RTR"}, {IBV_QPS_RTS, "RTS"}};
  for (const Step& step : steps) {
    ibv_qp_attr attr{};
    int mask = 0;
    attr.qp_state = step.state;
    if (rdma_init_qp_attr(id, &attr, &mask) != 0)
      throw_errno("rdma_init_qp_attr", device, std::string("computing the QP attributes for ") + step.name);
    if (step.state == IBV_QPS_INIT) attr.qp_access_flags = IBV_ACCESS_REMOTE_READ;  // never remote Write or atomics
    if (step.state == IBV_QPS_RTR) attr.max_dest_rd_atomic = responder_resources;
    if (step.state == IBV_QPS_RTS) {
      attr.max_rd_atomic = 0;  // this side issues no Reads
      attr.rnr_retry = std::min<std::uint8_t>(rnr_retry_count, 7);
      mask |= IBV_QP_RNR_RETRY;
    }
    if (int err = ibv_modify_qp(qp, &attr, mask)) throw_error("ibv_modify_qp", err, device, std::string("moving the QP to ") + step.name);
  }
}

void accept_with_qp(rdma_cm_id* id, const ibv_qp* qp, std::span<const std::uint8_t> private_data, std::uint8_t responder_resources,
                    std::uint8_t rnr_retry_count) {
  rdma_conn_param param{};
  param.private_data = private_data.data();
  param.private_data_len = static_cast<std::uint8_t>(private_data.size());
  param.responder_resources = responder_resources;
  param.initiator_depth = 0;
  param.retry_count = 7;
  param.rnr_retry_count = rnr_retry_count;
  param.qp_num = qp->qp_num;
  if (rdma_accept(id, &param) != 0) throw_errno("rdma_accept", device_name(id->verbs), "accepting a connection with QP " + std::to_string(qp->qp_num));
}

int move_to_error(ibv_qp* qp) noexcept {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  return ibv_modify_qp(qp, &attr, IBV_QP_STATE);
}

int reject(rdma_cm_id* id, std::span<const std::uint8_t> private_data) noexcept {
  if (rdma_reject(id, private_data.data(), static_cast<std::uint8_t>(private_data.size())) != 0) return errno;
  return 0;
}

}  // namespace vod::rdma
