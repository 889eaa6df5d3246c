// SPDX-License-Identifier: LGPL-2.1-or-later
// Posting work requests: the one place an RDMA Read, a Send or a receive work request is built.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <vector>

namespace vod::rdma {

// A signaled RDMA Read of the bytes `sge` names from remote_addr/rkey, tagged with wr_id (not yet
// linked to a next one).
inline ibv_send_wr read_wr(std::uint64_t wr_id, ibv_sge* sge, std::uint64_t remote_addr, std::uint32_t rkey) noexcept {
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = remote_addr;
  wr.wr.rdma.rkey = rkey;
  return wr;
}

// Posts a signaled RDMA Read of `length` bytes from remote_addr/rkey into local/lkey, tagged with
// wr_id. Returns ibv_post_send's error number (0 on success).
inline int post_read(ibv_qp* qp, std::uint64_t wr_id, void* local, std::uint32_t length, std::uint32_t lkey, std::uint64_t remote_addr,
                     std::uint32_t rkey) noexcept {
  ibv_sge sge{reinterpret_cast<std::uint64_t>(local), length, lkey};
  ibv_send_wr wr = read_wr(wr_id, &sge, remote_addr, rkey);
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, &wr, &bad);
}

// Posts a Send of `length` bytes at local/lkey, tagged with wr_id (signaled unless told otherwise,
// inline when `inline_ok`). Returns ibv_post_send's error number (0 on success).
inline int post_send(ibv_qp* qp, std::uint64_t wr_id, const void* local, std::uint32_t length, std::uint32_t lkey, bool signaled = true,
                     bool inline_ok = false) noexcept {
  ibv_sge sge{reinterpret_cast<std::uint64_t>(local), length, lkey};
  ibv_send_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | (inline_ok ? IBV_SEND_INLINE : 0);
  ibv_send_wr* bad = nullptr;
  return ibv_post_send(qp, &wr, &bad);
}

// Posts a receive of up to `length` bytes into local/lkey, tagged with wr_id. Returns
// ibv_post_recv's error number (0 on success).
inline int post_recv(ibv_qp* qp, std::uint64_t wr_id, void* local, std::uint32_t length, std::uint32_t lkey) noexcept {
  ibv_sge sge{reinterpret_cast<std::uint64_t>(local), length, lkey};
  ibv_recv_wr wr{};
  wr.wr_id = wr_id;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  return ibv_post_recv(qp, &wr, &bad);
}

// RDMA Reads gathered and posted with one ibv_post_send: one doorbell for what one round of a read
// engine decided (on Soft-RoCE, one system call instead of one per Read).
class ReadBatch {
 public:
  // `fence`: this Read starts only once every earlier Read on the QP has completed
  // (IBV_SEND_FENCE), so it samples memory after theirs did.
  void add(std::uint64_t wr_id, void* local, std::uint32_t length, std::uint32_t lkey, std::uint64_t remote_addr, std::uint32_t rkey,
           bool fence = false) {
    sges_.push_back({reinterpret_cast<std::uint64_t>(local), length, lkey});
    wrs_.push_back(read_wr(wr_id, nullptr, remote_addr, rkey));  // sg_list is set when posting
    if (fence) wrs_.back().send_flags |= IBV_SEND_FENCE;
  }
  bool empty() const noexcept { return wrs_.empty(); }
  // Posts what was added, in order, and empties the batch. Returns ibv_post_send's error number.
  int post(ibv_qp* qp) noexcept {
    if (wrs_.empty()) return 0;
    for (std::size_t i = 0; i < wrs_.size(); ++i) {  // linked only now: the vectors may have grown
      wrs_[i].sg_list = &sges_[i];
      wrs_[i].next = i + 1 < wrs_.size() ? &wrs_[i + 1] : nullptr;
    }
    ibv_send_wr* bad = nullptr;
    const int err = ibv_post_send(qp, wrs_.data(), &bad);
    wrs_.clear();
    sges_.clear();
    return err;
  }

 private:
  std::vector<ibv_send_wr> wrs_;
  std::vector<ibv_sge> sges_;
};

}  // namespace vod::rdma
