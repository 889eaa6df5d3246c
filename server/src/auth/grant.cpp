// SPDX-License-Identifier: LGPL-2.1-or-later
#include "auth/grant.hpp"

namespace vod::server::auth {

std::vector<rdma_cm_id*> ExpiryQueue::take_due(Clock::time_point now) {
  std::vector<rdma_cm_id*> due;
  while (!entries_.empty() && entries_.begin()->first <= now) {
    due.push_back(entries_.begin()->second);
    entries_.erase(entries_.begin());
  }
  return due;
}

Grant::Grant(SourceLimits& limits, ExpiryQueue& expiries, rdma_cm_id* id, Terms terms, std::uint64_t now_unix, Clock::time_point now)
    : limits_(&limits), expiries_(&expiries), id_(id), terms_(std::move(terms)) {
  limits_->opened(terms_.address);
  if (terms_.token) {
    const std::uint64_t expires = terms_.token->expires;
    const std::uint64_t left = expires > now_unix ? expires - now_unix : 0;
    deadline_ = now + std::chrono::seconds(left);
    expiries_->add(*deadline_, id_);
  }
}

void Grant::release() noexcept {
  if (!limits_) return;
  limits_->closed(terms_.address);
  if (deadline_) expiries_->remove(*deadline_, id_);
  limits_ = nullptr;
  expiries_ = nullptr;
  deadline_.reset();
}

void Grant::take(Grant& o) noexcept {
  limits_ = std::exchange(o.limits_, nullptr);
  expiries_ = std::exchange(o.expiries_, nullptr);
  id_ = o.id_;
  terms_ = std::move(o.terms_);
  deadline_ = std::exchange(o.deadline_, std::nullopt);
}

}  // namespace vod::server::auth
