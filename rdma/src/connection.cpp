// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/rdma/connection.hpp"

#include <poll.h>

#include <netdb.h>

#include <algorithm>

#include <cerrno>
#include <cstring>

#include "vod/rdma/connector.hpp"
#include "vod/rdma/error.hpp"

namespace vod::rdma {

ClientEndpoint::~ClientEndpoint() {
  if (id && qp) rdma_disconnect(id.get());
}

std::unique_ptr<ClientEndpoint> connect(const ConnectOptions& o) {
  // The non-blocking state machine, driven here by a poll of its own.
  Connector c(o);
  for (;;) {
    const auto state = c.step();
    if (state == ConnectState::established) return c.take();
    if (state == ConnectState::failed) c.rethrow();
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(c.deadline() - Connector::Clock::now());
    pollfd p{c.fd(), POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0))) < 0 && errno != EINTR)
      throw_errno("poll", "", "waiting for a connection event");
  }
}

std::string ack_timeout_text(const ClientEndpoint& ep) {
  if (ep.id && ep.id->verbs && ep.id->verbs->device->transport_type == IBV_TRANSPORT_IWARP) return "TCP's";
  if (ep.qp_ack_timeout == 0) return "none (the QP never times out)";
  const double ms = 4.096e-3 * static_cast<double>(1ull << std::min<unsigned>(ep.qp_ack_timeout, 31));
  return std::to_string(static_cast<std::uint64_t>(ms + 0.5)) + " ms a try (exponent " + std::to_string(ep.qp_ack_timeout) + ")";
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
  if (rdma_accept(id, &param) != 0)
    throw_errno("rdma_accept", device_name(id->verbs), "accepting a connection with QP " + std::to_string(qp->qp_num));
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
