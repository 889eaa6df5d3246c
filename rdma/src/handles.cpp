// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/rdma/handles.hpp"

#include <poll.h>
#include <sys/resource.h>

#include <fcntl.h>
#include <cerrno>

#include "vod/rdma/error.hpp"

namespace vod::rdma {

std::string device_name(const ibv_context* ctx) { return ctx && ctx->device ? ibv_get_device_name(ctx->device) : "(no device yet)"; }

ProtectionDomain alloc_pd(ibv_context* ctx) {
  ProtectionDomain pd(ibv_alloc_pd(ctx));
  if (!pd) throw_errno("ibv_alloc_pd", device_name(ctx), "allocating a protection domain");
  return pd;
}

MemoryRegion register_memory(ibv_pd* pd, void* addr, std::size_t length, int access, const std::string& what) {
  MemoryRegion mr(ibv_reg_mr(pd, addr, length, access));
  if (!mr) {
    const int err = errno;
    std::string context = "registering " + what + " (" + std::to_string(length) + " bytes)";
    rlimit limit{};
    // Pinning beyond RLIMIT_MEMLOCK fails with ENOMEM (EPERM on some kernels): say which limit and how to raise it.
    if ((err == ENOMEM || err == EPERM) && getrlimit(RLIMIT_MEMLOCK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      context += "; the locked-memory limit (RLIMIT_MEMLOCK) is " + std::to_string(limit.rlim_cur) +
                 " bytes: raise it with 'ulimit -l unlimited', LimitMEMLOCK=infinity in a systemd unit, or"
                 " /etc/security/limits.conf";
    errno = err;
    throw_errno("ibv_reg_mr", device_name(pd->context), context);
  }
  return mr;
}

CompletionChannel create_completion_channel(ibv_context* ctx) {
  CompletionChannel ch(ibv_create_comp_channel(ctx));
  if (!ch) throw_errno("ibv_create_comp_channel", device_name(ctx), "creating a completion channel");
  // Non-blocking, so that an event loop can drain it without ever sleeping in ibv_get_cq_event.
  const int flags = fcntl(ch->fd, F_GETFL);
  if (flags < 0 || fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw_errno("fcntl", device_name(ctx), "making the completion channel non-blocking");
  return ch;
}

CompletionQueue create_cq(ibv_context* ctx, int entries, ibv_comp_channel* channel) {
  CompletionQueue cq(ibv_create_cq(ctx, entries, nullptr, channel, 0));
  if (!cq) throw_errno("ibv_create_cq", device_name(ctx), "creating a CQ of " + std::to_string(entries) + " entries");
  return cq;
}

void dealloc_window(ibv_mw* mw) noexcept { ibv_dealloc_mw(mw); }

MemoryWindow alloc_type2_window(ibv_pd* pd) {
  MemoryWindow mw(ibv_alloc_mw(pd, IBV_MW_TYPE_2));
  if (!mw) throw_errno("ibv_alloc_mw", device_name(pd->context), "allocating a type-2 memory window");
  return mw;
}

VerbsQueuePair create_qp(ibv_pd* pd, ibv_qp_init_attr& attr) {
  VerbsQueuePair qp(ibv_create_qp(pd, &attr));
  if (!qp) throw_errno("ibv_create_qp", device_name(pd->context), "creating an RC QP");
  return qp;
}

QueuePair::QueuePair(rdma_cm_id* id, ibv_pd* pd, ibv_qp_init_attr& attr) {
  errno = 0;
  if (rdma_create_qp(id, pd, &attr) != 0) {
    // A provider may fail without saying why (errno 0). siw in Linux 6.1 does so once a process has
    // mapped its 143rd queue on the device (SIW_UOBJ_MAX_KEY of siw-abi.h): about 70 QPs at once.
    if (errno == 0)
      throw RdmaError(
          "rdma_create_qp", EAGAIN, device_name(id->verbs),
          "creating an RC QP: the provider gave no reason" +
              std::string(device_name(id->verbs).rfind("siw", 0) == 0
                              ? " (siw maps at most 143 queues per process and device, about 70 QPs at once: fewer connections per process)"
                              : ""));
    throw_errno("rdma_create_qp", device_name(id->verbs), "creating an RC QP");
  }
  id_ = id;
}

QueuePair& QueuePair::operator=(QueuePair&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = std::exchange(o.id_, nullptr);
  }
  return *this;
}

void QueuePair::reset() noexcept {
  if (id_ && id_->qp) rdma_destroy_qp(id_);
  id_ = nullptr;
}

CmEvent::~CmEvent() { release(); }

void CmEvent::release() noexcept {
  if (event_) rdma_ack_cm_event(event_);
  event_ = nullptr;
}

std::span<const std::uint8_t> CmEvent::private_data() const noexcept {
  const auto& c = event_->param.conn;
  if (!c.private_data || c.private_data_len == 0) return {};
  return {static_cast<const std::uint8_t*>(c.private_data), c.private_data_len};
}

EventChannel::EventChannel() : channel_(rdma_create_event_channel()) {
  if (!channel_) {
    if (errno == ENODEV || errno == ENOENT) throw NoDeviceError("rdma_create_event_channel: no RDMA device or /dev/infiniband/rdma_cm");
    throw_errno("rdma_create_event_channel", "", "opening /dev/infiniband/rdma_cm");
  }
  const int flags = fcntl(channel_->fd, F_GETFL);
  if (flags < 0 || fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw_errno("fcntl", "", "making the rdma_cm event channel non-blocking");
}

std::optional<CmEvent> EventChannel::next(std::optional<std::chrono::milliseconds> timeout) {
  for (;;) {
    rdma_cm_event* e = nullptr;
    if (rdma_get_cm_event(channel_.get(), &e) == 0) return CmEvent(e);
    if (errno != EAGAIN && errno != EWOULDBLOCK) throw_errno("rdma_get_cm_event", "", "waiting for a connection event");
    pollfd p{channel_->fd, POLLIN, 0};
    const int ms = timeout ? static_cast<int>(timeout->count()) : -1;
    const int n = poll(&p, 1, ms);
    if (n == 0) return std::nullopt;
    if (n < 0 && errno != EINTR) throw_errno("poll", "", "waiting for a connection event");
    if (n < 0) return std::nullopt;  // a signal: let the caller look at its flags
  }
}

CmIdHandle create_id(EventChannel& channel, void* context, rdma_port_space ps) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel.get(), &id, context, ps) != 0) throw_errno("rdma_create_id", "", "creating a connection id");
  return CmIdHandle(id);
}

}  // namespace vod::rdma
