// Posting work requests: the one place an RDMA Read work request is built.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>

namespace vod::rdma {

// Posts a signaled RDMA Read of `length` bytes from remote_addr/rkey into local/lkey, tagged with
// wr_id. Returns ibv_post_send's error number (0 on success).
inline int post_read(ibv_qp* qp, std::uint64_t wr_id, void* local, std::uint32_t length, std::uint32_t lkey,
                     std::uint64_t remote_addr, std::uint32_t rkey) noexcept {
  ibv_sge sge{reinterpret_cast<std::uint64_t>(local), length, lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = rkey;
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, &wr, &bad);
}

}  // namespace vod::rdma
