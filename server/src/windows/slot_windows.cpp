// SPDX-License-Identifier: LGPL-2.1-or-later
#include "windows/slot_windows.hpp"

#include <algorithm>
#include <string>

namespace vod::server::windows {

SlotWindows::~SlotWindows() { clear(); }

void SlotWindows::clear() noexcept {
  for (auto& [slot, w] : windows_) watchers_.unwatch(slot, *this);
  windows_.clear();  // ibv_dealloc_mw each: its rkey fails from now on
}

void SlotWindows::slot_refilling(std::uint32_t slot) noexcept { windows_.erase(slot); }

void SlotWindows::drop_expired(Clock::time_point now) noexcept {
  for (auto it = windows_.begin(); it != windows_.end();) {
    if (it->second.bound && it->second.keep_until <= now) {
      watchers_.unwatch(it->first, *this);
      it = windows_.erase(it);
    } else {
      ++it;
    }
  }
}

std::optional<std::uint32_t> SlotWindows::bound(std::uint32_t slot, Clock::time_point now) {
  auto it = windows_.find(slot);
  if (it == windows_.end() || !it->second.bound) return std::nullopt;
  it->second.keep_until = std::max(it->second.keep_until, now + keep_);
  return it->second.rkey;
}

std::optional<SlotWindows::ToBind> SlotWindows::make(std::uint32_t slot, const void* addr, std::uint64_t length, Clock::time_point now) {
  if (windows_.count(slot)) windows_.erase(slot);  // a bind that failed or is stale: replaced
  if (windows_.size() >= cap_) {
    // The window whose lease ended first goes, if any has; one still leased never does.
    auto oldest = windows_.end();
    for (auto it = windows_.begin(); it != windows_.end(); ++it)
      if (it->second.bound && it->second.keep_until <= now &&
          (oldest == windows_.end() || it->second.keep_until < oldest->second.keep_until))
        oldest = it;
    if (oldest == windows_.end()) return std::nullopt;
    watchers_.unwatch(oldest->first, *this);
    windows_.erase(oldest);
  }
  Window w;
  if (kind_ == Kind::region) {
    if (budget_ && !budget_->fits(length)) {
      drop_expired(now);
      if (!budget_->fits(length))
        throw BudgetExhausted("registering " + std::to_string(length) + " more bytes would pass --isolation-memory (" +
                              std::to_string(budget_->used() >> 20) + " of " + std::to_string(budget_->limit() >> 20) + " MiB in use)");
    }
    w.mr = rdma::register_memory(pd_, const_cast<void*>(addr), length, IBV_ACCESS_REMOTE_READ, "a cache slot on a connection's own PD");
    if (budget_) w.pinned = budget_->take(length);
    w.rkey = w.mr->rkey;
    w.bound = true;
  } else {
    w.mw = rdma::alloc_type2_window(pd_);
    w.rkey = rkeys_.next(w.mw->rkey);
  }
  w.keep_until = now + keep_;
  ToBind out{w.mw.get(), w.rkey};
  windows_.emplace(slot, std::move(w));
  watchers_.watch(slot, *this);
  return out;
}

bool SlotWindows::bind_done(std::uint32_t slot, bool ok, Clock::time_point now) {
  auto it = windows_.find(slot);
  if (it == windows_.end()) return false;
  if (!ok) {
    watchers_.unwatch(slot, *this);
    windows_.erase(it);
    return false;
  }
  it->second.bound = true;
  it->second.keep_until = now + keep_;
  return true;
}

std::optional<Clock::time_point> SlotWindows::expiry() const {
  std::optional<Clock::time_point> first;
  for (const auto& [slot, w] : windows_)
    if (w.bound && (!first || w.keep_until < *first)) first = w.keep_until;
  return first;
}

}  // namespace vod::server::windows
