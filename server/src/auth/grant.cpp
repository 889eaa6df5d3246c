// SPDX-License-Identifier: LGPL-2.1-or-later
#include "auth/grant.hpp"

namespace vod::server::auth {

Grant::Grant(SourceLimits& limits, Terms terms, std::uint64_t now_unix, Clock::time_point now)
    : limits_(&limits), terms_(std::move(terms)) {
  limits_->opened(terms_.address);
  if (terms_.token) {
    const std::uint64_t expires = terms_.token->expires;
    const std::uint64_t left = expires > now_unix ? expires - now_unix : 0;
    deadline_ = now + std::chrono::seconds(left);
  }
}

void Grant::release() noexcept {
  if (!limits_) return;
  limits_->closed(terms_.address);
  limits_ = nullptr;
  deadline_.reset();
}

void Grant::take(Grant& o) noexcept {
  limits_ = std::exchange(o.limits_, nullptr);
  terms_ = std::move(o.terms_);
  deadline_ = std::exchange(o.deadline_, std::nullopt);
}

}  // namespace vod::server::auth
