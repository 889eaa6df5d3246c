// SPDX-License-Identifier: LGPL-2.1-or-later
// One RAII owner per verbs and rdma_cm object. An owner that holds others is declared so that its
// members are destroyed in reverse order of creation: QP before CQ before completion channel, MRs
// before the PD, and the cm_id last (the udaddy / rping teardown order).
#pragma once

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

namespace vod::rdma {

namespace detail {
template <auto Destroy>
struct Deleter {
  template <class T>
  void operator()(T* p) const noexcept {
    if (p) Destroy(p);
  }
};
}  // namespace detail

using ProtectionDomain = std::unique_ptr<ibv_pd, detail::Deleter<ibv_dealloc_pd>>;
using MemoryRegion = std::unique_ptr<ibv_mr, detail::Deleter<ibv_dereg_mr>>;
using CompletionChannel = std::unique_ptr<ibv_comp_channel, detail::Deleter<ibv_destroy_comp_channel>>;
using CompletionQueue = std::unique_ptr<ibv_cq, detail::Deleter<ibv_destroy_cq>>;
using CmIdHandle = std::unique_ptr<rdma_cm_id, detail::Deleter<rdma_destroy_id>>;
// A memory window; deallocating it invalidates its rkey at once. (ibv_dealloc_mw is a static inline
// in verbs.h: a type named after it would have internal linkage, hence this wrapper.)
void dealloc_window(ibv_mw* mw) noexcept;
using MemoryWindow = std::unique_ptr<ibv_mw, detail::Deleter<dealloc_window>>;
// A QP created with ibv_create_qp rather than through rdma_cm (rdma_cm is then told its number in
// rdma_accept and leaves its state to the owner): see bring_up_passive_qp() in connection.hpp.
using VerbsQueuePair = std::unique_ptr<ibv_qp, detail::Deleter<ibv_destroy_qp>>;

// The name of the device behind a verbs context, or "(no device yet)".
std::string device_name(const ibv_context* ctx);

ProtectionDomain alloc_pd(ibv_context* ctx);
MemoryRegion register_memory(ibv_pd* pd, void* addr, std::size_t length, int access, const std::string& what);
CompletionChannel create_completion_channel(ibv_context* ctx);  // non-blocking fd
CompletionQueue create_cq(ibv_context* ctx, int entries, ibv_comp_channel* channel);
MemoryWindow alloc_type2_window(ibv_pd* pd);
VerbsQueuePair create_qp(ibv_pd* pd, ibv_qp_init_attr& attr);  // `attr` gets the granted capacities

// rdma_cm's QP for a cm_id: created by rdma_create_qp, destroyed by rdma_destroy_qp on the same id.
// It must be destroyed before the cm_id, the CQs and the PD it uses.
class QueuePair {
 public:
  QueuePair() = default;
  // `attr` is updated with the capacities the device granted (as rdma_create_qp does).
  QueuePair(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr& attr);
  QueuePair(QueuePair&& o) noexcept : id_(std::exchange(o.id_, nullptr)) {}
  QueuePair& operator=(QueuePair&& o) noexcept;
  QueuePair(const QueuePair&) = delete;
  QueuePair& operator=(const QueuePair&) = delete;
  ~QueuePair() { reset(); }

  ibv_qp* get() const noexcept { return id_ ? id_->qp : nullptr; }
  explicit operator bool() const noexcept { return get() != nullptr; }
  void reset() noexcept;

 private:
  rdma_cm_id* id_ = nullptr;
};

// An rdma_cm event, acknowledged when the owner goes away. The private data it carries is valid
// until then, so decode it before letting go of the event.
class CmEvent {
 public:
  explicit CmEvent(rdma_cm_event* e) noexcept : event_(e) {}
  CmEvent(CmEvent&& o) noexcept : event_(std::exchange(o.event_, nullptr)) {}
  CmEvent& operator=(CmEvent&&) = delete;
  CmEvent(const CmEvent&) = delete;
  ~CmEvent();
  // Acknowledges the event now. Destroying a cm_id waits until its events are acknowledged, so a
  // handler that destroys the event's id calls this first. Accessors must not be used afterwards.
  void release() noexcept;

  rdma_cm_event_type type() const noexcept { return event_->event; }
  const char* type_name() const noexcept { return rdma_event_str(event_->event); }
  rdma_cm_id* id() const noexcept { return event_->id; }
  rdma_cm_id* listen_id() const noexcept { return event_->listen_id; }
  int status() const noexcept { return event_->status; }
  const rdma_conn_param& conn() const noexcept { return event_->param.conn; }
  std::span<const std::uint8_t> private_data() const noexcept;

 private:
  rdma_cm_event* event_;
};

// The channel that delivers rdma_cm events. Its fd is non-blocking so that waits can time out.
class EventChannel {
 public:
  EventChannel();
  rdma_event_channel* get() const noexcept { return channel_.get(); }
  int fd() const noexcept { return channel_->fd; }

  // The next event, or nullopt when `timeout` passes first (nullopt timeout waits forever).
  std::optional<CmEvent> next(std::optional<std::chrono::milliseconds> timeout);

 private:
  struct Destroy {
    void operator()(rdma_event_channel* c) const noexcept { rdma_destroy_event_channel(c); }
  };
  std::unique_ptr<rdma_event_channel, Destroy> channel_;
};

CmIdHandle create_id(EventChannel& channel, void* context, rdma_port_space ps = RDMA_PS_TCP);

}  // namespace vod::rdma
