// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/rdma/completion_hub.hpp"

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <string>

#include "vod/rdma/error.hpp"

namespace vod::rdma {

namespace {
constexpr std::uint32_t kInitialEntries = 256;
}

CompletionHub::~CompletionHub() {
  // Events taken from a channel must be acknowledged before its CQ is destroyed.
  consume();
}

std::uint32_t CompletionHub::add_owner(Handler handler) {
  const std::uint32_t id = next_owner_++;
  if (id == 0) throw std::length_error("completion hub: owner ids exhausted");
  handlers_.emplace(id, std::make_shared<const Handler>(std::move(handler)));
  return id;
}

void CompletionHub::remove_owner(std::uint32_t owner) noexcept { handlers_.erase(owner); }

ibv_cq* CompletionHub::reserve(ibv_context* ctx, std::uint32_t entries) {
  Device& d = devices_[ctx];
  if (!d.cq) {
    ibv_device_attr attr{};
    if (int err = ibv_query_device(ctx, &attr)) throw_error("ibv_query_device", err, device_name(ctx), "sizing a shared CQ");
    d.max_cqe = static_cast<std::uint32_t>(std::max(attr.max_cqe, 1));
    d.channel = create_completion_channel(ctx);
    d.capacity = std::min(d.max_cqe, std::max(kInitialEntries, entries));
    d.cq = create_cq(ctx, static_cast<int>(d.capacity), d.channel.get());
    armed_ = false;
  }
  const std::uint64_t wanted = std::uint64_t{d.reserved} + entries;
  if (wanted > d.max_cqe)
    throw RdmaError("ibv_resize_cq", ENOSPC, device_name(ctx),
                    "sharing one CQ between connections: " + std::to_string(wanted) + " outstanding completions exceed the device's max_cqe " +
                        std::to_string(d.max_cqe) + "; use fewer connections per thread or a smaller read depth");
  if (wanted > d.capacity) {
    const auto grown = static_cast<std::uint32_t>(std::min<std::uint64_t>(d.max_cqe, std::max<std::uint64_t>(wanted, 2ull * d.capacity)));
    if (int err = ibv_resize_cq(d.cq.get(), static_cast<int>(grown)))
      throw_error("ibv_resize_cq", err, device_name(ctx), "growing the shared CQ to " + std::to_string(grown) + " entries");
    d.capacity = std::max<std::uint32_t>(grown, static_cast<std::uint32_t>(d.cq->cqe));
  }
  d.reserved = static_cast<std::uint32_t>(wanted);
  return d.cq.get();
}

void CompletionHub::release(ibv_context* ctx, std::uint32_t entries) noexcept {
  auto it = devices_.find(ctx);
  if (it != devices_.end()) it->second.reserved -= std::min(entries, it->second.reserved);
}

int CompletionHub::poll(int max) {
  ibv_wc wc[64];
  int handled = 0;
  for (auto& [ctx, d] : devices_) {
    while (handled < max) {
      const int n = ibv_poll_cq(d.cq.get(), std::min(64, max - handled), wc);
      if (n < 0) throw_error("ibv_poll_cq", -n, device_name(ctx), "polling the shared CQ");
      if (n == 0) break;
      for (int i = 0; i < n; ++i) {
        const WorkId id = WorkId::unpack(wc[i].wr_id);
        auto h = handlers_.find(id.owner);
        if (h == handlers_.end()) {
          ++dropped_;  // its owner went away: a flush after its QP was destroyed
          continue;
        }
        const std::shared_ptr<const Handler> handler = h->second;  // the handler may remove its owner
        (*handler)(wc[i], id);
      }
      handled += n;
    }
  }
  return handled;
}

void CompletionHub::arm() {
  if (armed_) return;
  for (auto& [ctx, d] : devices_)
    if (int err = ibv_req_notify_cq(d.cq.get(), 0)) throw_error("ibv_req_notify_cq", err, device_name(ctx), "arming the shared CQ");
  armed_ = !devices_.empty();
}

void CompletionHub::consume() noexcept {
  for (auto& [ctx, d] : devices_) {
    ibv_cq* cq = nullptr;
    void* context = nullptr;
    while (ibv_get_cq_event(d.channel.get(), &cq, &context) == 0) {  // the channel is non-blocking
      ibv_ack_cq_events(cq, 1);
      armed_ = false;
    }
  }
}

std::vector<int> CompletionHub::fds() const {
  std::vector<int> out;
  for (const auto& [ctx, d] : devices_) out.push_back(d.channel->fd);
  return out;
}

}  // namespace vod::rdma
