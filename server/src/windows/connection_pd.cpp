// SPDX-License-Identifier: LGPL-2.1-or-later
#include "windows/connection_pd.hpp"

#include "cm/transport.hpp"
#include "vod/rdma/device.hpp"
#include "vod/rdma/error.hpp"
#include "vod/rdma/handles.hpp"

namespace vod::server::windows {

namespace {
std::string mib(std::uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }
}  // namespace

PinnedBudget::Lease& PinnedBudget::Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    reset();
    budget_ = std::exchange(o.budget_, nullptr);
    bytes_ = o.bytes_;
  }
  return *this;
}

void PinnedBudget::Lease::reset() noexcept {
  if (budget_) budget_->used_ -= bytes_;
  budget_ = nullptr;
}

PinnedBudget::Lease PinnedBudget::take(std::uint64_t bytes) noexcept {
  used_ += bytes;
  return Lease(this, bytes);
}

ConnectionPd::ConnectionPd(ibv_context* ctx, PinnedBudget& budget, std::span<const Span> spans) {
  std::uint64_t bytes = 0;
  for (const Span& s : spans) bytes += s.length;
  if (!budget.fits(bytes))
    throw cm::SetupRefused(proto::RejectCode::server_full,
                           "server full: isolating this connection would pin " + mib(bytes) + " more, and connections pin " +
                               mib(budget.used()) + " of --isolation-memory " + mib(budget.limit()) + " already; try again later");
  lease_ = budget.take(bytes);
  pd_ = rdma::alloc_pd(ctx);
  for (const Span& s : spans) {
    if (s.length == 0) {
      regions_.push_back({});
      continue;
    }
    try {
      // It says which call failed with which errno, and names RLIMIT_MEMLOCK when that is the cause.
      mrs_.push_back(rdma::register_memory(pd_.get(), const_cast<void*>(s.addr), s.length, IBV_ACCESS_REMOTE_READ,
                                           mib(s.length) + " on a connection's own protection domain"));
    } catch (const rdma::RdmaError& e) {
      throw cm::SetupRefused(proto::RejectCode::internal_error, std::string("cannot isolate the connection: ") + e.what());
    }
    regions_.push_back({reinterpret_cast<std::uint64_t>(s.addr), s.length, mrs_.back()->rkey});
  }
}

void ConnectionPd::invalidate() noexcept { mrs_.clear(); }

}  // namespace vod::server::windows
