// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cm/routes.hpp"

namespace vod::server::cm {

namespace {
void* as_context(std::uint64_t n) noexcept { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(n)); }
std::uint64_t number_of(const rdma_cm_id* id) noexcept { return reinterpret_cast<std::uintptr_t>(id->context); }
}  // namespace

void Routes::Route::reset() noexcept {
  if (!routes_) return;
  std::exchange(routes_, nullptr)->routes_.erase(number_);
  if (number_of(id_) == number_) id_->context = nullptr;
}

Routes::Route Routes::add(rdma_cm_id* id, CmEndpoint& endpoint) {
  const std::uint64_t n = next_++;
  routes_.emplace(n, &endpoint);
  id->context = as_context(n);
  return Route(this, id, n);
}

CmEndpoint* Routes::find(const rdma_cm_id* id) const noexcept {
  const std::uint64_t n = number_of(id);
  if (n == 0) return nullptr;
  auto it = routes_.find(n);
  return it == routes_.end() ? nullptr : it->second;
}

}  // namespace vod::server::cm
