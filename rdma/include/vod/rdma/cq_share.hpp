// SPDX-License-Identifier: LGPL-2.1-or-later
// A connection's two holdings in a CompletionHub, each with one owner: its share of a device's CQ
// (CqShare: the completions its QP may have outstanding, reserved when the QP is made and given
// back when it goes) and its owner id (HubOwner: where its tagged completions are delivered, until
// it goes). Declare the CqShare before the QP, so the reservation is given back only once the QP is
// gone; completions that arrive for an owner that went are dropped (counted by the hub).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <utility>

#include "vod/rdma/completion_hub.hpp"

namespace vod::rdma {

class CqShare {
 public:
  CqShare() noexcept = default;
  // Reserves `entries` on ctx's CQ of `hub` (creating it on first use); throws RdmaError when the
  // device cannot hold them.
  CqShare(CompletionHub& hub, ibv_context* ctx, std::uint32_t entries) : hub_(&hub), entries_(entries), cq_(hub.reserve(ctx, entries)) {}
  CqShare(CqShare&& o) noexcept : hub_(std::exchange(o.hub_, nullptr)), entries_(o.entries_), cq_(std::exchange(o.cq_, nullptr)) {}
  CqShare& operator=(CqShare&& o) noexcept {
    if (this != &o) {
      reset();
      hub_ = std::exchange(o.hub_, nullptr);
      entries_ = o.entries_;
      cq_ = std::exchange(o.cq_, nullptr);
    }
    return *this;
  }
  CqShare(const CqShare&) = delete;
  CqShare& operator=(const CqShare&) = delete;
  ~CqShare() { reset(); }

  ibv_cq* cq() const noexcept { return cq_; }
  std::uint32_t entries() const noexcept { return hub_ ? entries_ : 0; }
  void reset() noexcept {
    if (hub_) std::exchange(hub_, nullptr)->release(cq_, entries_);
    cq_ = nullptr;
  }

 private:
  CompletionHub* hub_ = nullptr;
  std::uint32_t entries_ = 0;
  ibv_cq* cq_ = nullptr;
};

class HubOwner {
 public:
  HubOwner() noexcept = default;
  HubOwner(CompletionHub& hub, CompletionHub::Handler handler) : hub_(&hub), id_(hub.add_owner(std::move(handler))) {}
  HubOwner(HubOwner&& o) noexcept : hub_(std::exchange(o.hub_, nullptr)), id_(o.id_) {}
  HubOwner& operator=(HubOwner&& o) noexcept {
    if (this != &o) {
      reset();
      hub_ = std::exchange(o.hub_, nullptr);
      id_ = o.id_;
    }
    return *this;
  }
  HubOwner(const HubOwner&) = delete;
  HubOwner& operator=(const HubOwner&) = delete;
  ~HubOwner() { reset(); }

  std::uint32_t id() const noexcept { return id_; }
  explicit operator bool() const noexcept { return hub_ != nullptr; }
  void reset() noexcept {
    if (hub_) std::exchange(hub_, nullptr)->remove_owner(id_);
  }

 private:
  CompletionHub* hub_ = nullptr;
  std::uint32_t id_ = 0;
};

}  // namespace vod::rdma
