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
  if (!d.channel) {
    ibv_device_attr attr{};
    if (int err = ibv_query_device(ctx, &attr)) throw_error("ibv_query_device", err, device_name(ctx), "sizing a shared CQ");
    d.max_cqe = static_cast<std::uint32_t>(std::max(attr.max_cqe, 1));
    d.channel = create_completion_channel(ctx);
  }
  if (entries > d.max_cqe)
    throw RdmaError("ibv_create_cq", ENOSPC, device_name(ctx),
                    "one connection's " + std::to_string(entries) + " outstanding completions exceed the device's max_cqe " +
                        std::to_string(d.max_cqe) + "; use a smaller read depth");
  if (!d.cqs.empty()) {
    Cq& last = d.cqs.back();
    const std::uint64_t wanted = std::uint64_t{last.reserved} + entries;
    if (wanted <= last.capacity) {
      last.reserved = static_cast<std::uint32_t>(wanted);
      return last.cq.get();
    }
    if (d.resizes && wanted <= d.max_cqe) {
      const auto grown =
          static_cast<std::uint32_t>(std::min<std::uint64_t>(d.max_cqe, std::max<std::uint64_t>(wanted, 2ull * last.capacity)));
      const int err = ibv_resize_cq(last.cq.get(), static_cast<int>(grown));
      if (err == 0) {
        last.capacity = std::max<std::uint32_t>(grown, static_cast<std::uint32_t>(last.cq->cqe));
        last.reserved = static_cast<std::uint32_t>(wanted);
        return last.cq.get();
      }
      if (err != EOPNOTSUPP && err != ENOSYS)
        throw_error("ibv_resize_cq", err, device_name(ctx), "growing the shared CQ to " + std::to_string(grown) + " entries");
      d.resizes = false;  // siw: a CQ keeps its size, so new QPs go to a new CQ, twice as large
    }
  }
  // A new CQ on the device's one channel: at first kInitialEntries, then twice the last, up to max_cqe.
  const std::uint32_t size = d.cqs.empty() ? kInitialEntries : 2 * d.cqs.back().capacity;
  Cq fresh;
  fresh.capacity = std::min(d.max_cqe, std::max(size, entries));
  fresh.cq = create_cq(ctx, static_cast<int>(fresh.capacity), d.channel.get());
  fresh.capacity = std::max<std::uint32_t>(fresh.capacity, static_cast<std::uint32_t>(fresh.cq->cqe));
  fresh.reserved = entries;
  d.cqs.push_back(std::move(fresh));
  armed_ = false;
  return d.cqs.back().cq.get();
}

void CompletionHub::release(ibv_cq* cq, std::uint32_t entries) noexcept {
  if (!cq) return;
  auto it = devices_.find(cq->context);
  if (it == devices_.end()) return;
  for (Cq& c : it->second.cqs)
    if (c.cq.get() == cq) c.reserved -= std::min(entries, c.reserved);
}

int CompletionHub::poll(int max) {
  ibv_wc wc[64];
  int handled = 0;
  for (auto& [ctx, d] : devices_)
    // By index: a handler may reserve, and a new CQ may be added to this vector meanwhile.
    for (std::size_t k = 0; k < d.cqs.size(); ++k)
      while (handled < max) {
        const int n = ibv_poll_cq(d.cqs[k].cq.get(), std::min(64, max - handled), wc);
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
  return handled;
}

void CompletionHub::arm() {
  if (armed_) return;
  for (auto& [ctx, d] : devices_)
    for (Cq& c : d.cqs)
      if (int err = ibv_req_notify_cq(c.cq.get(), 0)) throw_error("ibv_req_notify_cq", err, device_name(ctx), "arming the shared CQ");
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
