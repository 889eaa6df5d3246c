// SPDX-License-Identifier: LGPL-2.1-or-later
// What a device and port allow, queried never assumed, and the read-depth negotiation.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

namespace vod::rdma {

struct DeviceLimits {
  std::string name;
  bool iwarp = false;                     // iWARP semantics: see read_sink_access()
  std::uint32_t max_qp_rd_atom = 0;       // Reads this device answers per QP (responder side)
  std::uint32_t max_qp_init_rd_atom = 0;  // Reads this device issues per QP (initiator side)
  std::uint32_t max_qp_wr = 0;
  std::uint32_t max_cqe = 0;
  std::uint32_t max_sge = 0;
  std::uint64_t max_mr_size = 0;
  std::uint32_t max_msg_size = 0;  // of the port
  std::uint32_t active_mtu_bytes = 0;
  ibv_port_state port_state = IBV_PORT_NOP;
  // Type-2 memory windows (bound by a work request to one QP): 2A or 2B in the device's caps and a
  // non-zero max_mw. rxe has them; siw has none.
  bool type2_windows = false;
  std::uint32_t max_mw = 0;
  std::uint32_t max_mr = 0;  // memory regions on the device
};

DeviceLimits query_limits(ibv_context* ctx, std::uint8_t port_num);

// The initiator_depth a client asks for: what it wants, capped by its own max_qp_init_rd_atom and by
// the 8-bit field of rdma_conn_param. At least 1.
std::uint8_t client_initiator_depth(const DeviceLimits& local, unsigned wanted);

// The responder_resources a server accepts with: the client's initiator depth, capped by the
// server's max_qp_rd_atom. In a CONNECT_REQUEST event the client's initiator_depth arrives in
// param.conn.responder_resources (the CM reports fields from the receiver's point of view).
std::uint8_t server_responder_resources(const DeviceLimits& local, std::uint8_t requested_by_peer);

// Access flags for memory that RDMA Read responses land in: local write, plus remote write on iWARP,
// where the sink of a Read is the target of the peer's RDMA Write (rdma_cm and iWARP specs).
int read_sink_access(const DeviceLimits& local) noexcept;

// Whether a Read may carry IBV_SEND_FENCE (start only after every earlier Read on the QP has
// completed). siw refuses a fenced Read outright ("cannot fence read": the work request fails and
// the connection is torn down), so on iWARP devices a Read goes unfenced; callers must then not
// depend on the fence for correctness, only use it as an extra where it exists.
bool fences_reads(const DeviceLimits& local) noexcept;

// Throws NoDeviceError when ibv_get_device_list finds no device.
void require_device();

}  // namespace vod::rdma
