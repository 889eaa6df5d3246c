// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/rdma/device.hpp"

#include <algorithm>

#include "vod/rdma/error.hpp"
#include "vod/rdma/handles.hpp"

namespace vod::rdma {

namespace {
std::uint32_t mtu_bytes(ibv_mtu m) {
  switch (m) {
    case IBV_MTU_256: return 256;
    case IBV_MTU_512: return 512;
    case IBV_MTU_1024: return 1024;
    case IBV_MTU_2048: return 2048;
    case IBV_MTU_4096: return 4096;
  }
  return 0;
}
}  // namespace

DeviceLimits query_limits(ibv_context* ctx, std::uint8_t port_num) {
  DeviceLimits l;
  l.name = device_name(ctx);
  ibv_device_attr attr{};
  if (int err = ibv_query_device(ctx, &attr)) throw_error("ibv_query_device", err, l.name, "querying device limits");
  ibv_port_attr port{};
  if (int err = ibv_query_port(ctx, port_num, &port))
    throw_error("ibv_query_port", err, l.name, "querying port " + std::to_string(port_num));
  l.iwarp = ctx->device->transport_type == IBV_TRANSPORT_IWARP;
  l.max_qp_rd_atom = static_cast<std::uint32_t>(std::max(attr.max_qp_rd_atom, 0));
  l.max_qp_init_rd_atom = static_cast<std::uint32_t>(std::max(attr.max_qp_init_rd_atom, 0));
  l.max_qp_wr = static_cast<std::uint32_t>(std::max(attr.max_qp_wr, 0));
  l.max_cqe = static_cast<std::uint32_t>(std::max(attr.max_cqe, 0));
  l.max_sge = static_cast<std::uint32_t>(std::max(attr.max_sge, 0));
  l.max_mr_size = attr.max_mr_size;
  l.max_msg_size = port.max_msg_sz;
  l.active_mtu_bytes = mtu_bytes(port.active_mtu);
  l.port_state = port.state;
  l.max_mw = static_cast<std::uint32_t>(std::max(attr.max_mw, 0));
  l.max_mr = static_cast<std::uint32_t>(std::max(attr.max_mr, 0));
  l.type2_windows = l.max_mw > 0 && (attr.device_cap_flags & (IBV_DEVICE_MEM_WINDOW_TYPE_2A | IBV_DEVICE_MEM_WINDOW_TYPE_2B)) != 0;
  return l;
}

std::uint8_t client_initiator_depth(const DeviceLimits& local, unsigned wanted) {
  const unsigned cap = std::min({local.max_qp_init_rd_atom, 255u, std::max(wanted, 1u)});
  return static_cast<std::uint8_t>(std::max(cap, 1u));
}

std::uint8_t server_responder_resources(const DeviceLimits& local, std::uint8_t requested_by_peer) {
  const unsigned cap = std::min({local.max_qp_rd_atom, 255u, static_cast<unsigned>(requested_by_peer)});
  return static_cast<std::uint8_t>(std::max(cap, 1u));
}

int read_sink_access(const DeviceLimits& local) noexcept { return IBV_ACCESS_LOCAL_WRITE | (local.iwarp ? IBV_ACCESS_REMOTE_WRITE : 0); }

bool fences_reads(const DeviceLimits& local) noexcept { return !local.iwarp; }

void require_device() {
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list) ibv_free_device_list(list);
  if (!list || count == 0) throw NoDeviceError("no RDMA device found (ibv_get_device_list lists none)");
}

}  // namespace vod::rdma
