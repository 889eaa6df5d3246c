// SPDX-License-Identifier: LGPL-2.1-or-later
// --isolation pd (windows/isolation.hpp): one connection's own protection domain, with a registration
// of exactly each region it was granted (REMOTE_READ). An rkey of another PD fails on every device,
// so its keys read only what it was granted, only on its own QP (made on this PD), and nothing once
// they are deregistered (invalidate(), at a disconnect, a revocation or its token's expiry).
//
// Every registration pins its memory again and counts against RLIMIT_MEMLOCK and the device's
// max_mr and max_pd: PinnedBudget bounds what all connections' own registrations pin at once
// (--isolation-memory); a connection that would go past it, or whose registration the device
// refuses, is refused with the reason (cm::SetupRefused), never served with shared rkeys.
#pragma once

#include <infiniband/verbs.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "vod/protocol/region_descriptor.hpp"
#include "vod/rdma/handles.hpp"

namespace vod::server::windows {

class PinnedBudget {
 public:
  explicit PinnedBudget(std::uint64_t limit) noexcept : limit_(limit) {}
  // A share of the budget, given back when it goes.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& o) noexcept : budget_(std::exchange(o.budget_, nullptr)), bytes_(o.bytes_) {}
    Lease& operator=(Lease&& o) noexcept;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { reset(); }
    void reset() noexcept;
    std::uint64_t bytes() const noexcept { return budget_ ? bytes_ : 0; }

   private:
    friend class PinnedBudget;
    Lease(PinnedBudget* b, std::uint64_t bytes) noexcept : budget_(b), bytes_(bytes) {}
    PinnedBudget* budget_ = nullptr;
    std::uint64_t bytes_ = 0;
  };
  // Whether `bytes` more fit; take() them (after asking) for a lease of them.
  bool fits(std::uint64_t bytes) const noexcept { return bytes <= limit_ - std::min(limit_, used_); }
  Lease take(std::uint64_t bytes) noexcept;
  std::uint64_t used() const noexcept { return used_; }
  std::uint64_t limit() const noexcept { return limit_; }

 private:
  std::uint64_t limit_, used_ = 0;
};

class ConnectionPd {
 public:
  struct Span {
    const void* addr = nullptr;
    std::uint64_t length = 0;  // 0: an empty region (an empty descriptor, nothing registered)
  };
  // Allocates the PD and registers every span on it. Throws cm::SetupRefused (server_full) when the
  // spans do not fit `budget`, (internal_error) when the device refuses a registration, saying why.
  ConnectionPd(ibv_context* ctx, PinnedBudget& budget, std::span<const Span> spans);
  ConnectionPd(const ConnectionPd&) = delete;
  ConnectionPd& operator=(const ConnectionPd&) = delete;

  ibv_pd* pd() const noexcept { return pd_.get(); }
  // Each span's region in this PD, in the order given.
  const std::vector<proto::RegionDescriptor>& regions() const noexcept { return regions_; }
  std::uint64_t pinned() const noexcept { return lease_.bytes(); }
  // Deregisters every region: their rkeys read nothing from now on (the PD stays for the QP).
  void invalidate() noexcept;

 private:
  PinnedBudget::Lease lease_;
  rdma::ProtectionDomain pd_;  // after every QP and MR on it (its owner destroys its QP first)
  std::vector<rdma::MemoryRegion> mrs_;
  std::vector<proto::RegionDescriptor> regions_;
};

}  // namespace vod::server::windows
