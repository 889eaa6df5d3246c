// SPDX-License-Identifier: LGPL-2.1-or-later
// Which endpoint owns which rdma_cm_id, for the CM dispatcher (cm_dispatcher.hpp). An id's context
// holds a route number, never a pointer: numbers are never reused, and a Route (RAII, held by the
// owner next to its id) maps its number to the endpoint until it goes. An event for an id whose
// owner let go of its route (a live viewer retired while its QP flushes, a VoD connection rejected
// while its QP drains) finds nothing, and is acknowledged and dropped: never delivered to a stranger
// or to freed memory.
#pragma once

#include <rdma/rdma_cma.h>

#include <cstdint>
#include <unordered_map>
#include <utility>

#include "cm/cm_endpoint.hpp"

namespace vod::server::cm {

class Routes {
 public:
  // An id's route to its endpoint, from construction until it goes (move-only).
  class Route {
   public:
    Route() noexcept = default;
    Route(Route&& o) noexcept : routes_(std::exchange(o.routes_, nullptr)), id_(o.id_), number_(o.number_) {}
    Route& operator=(Route&& o) noexcept {
      if (this != &o) {
        reset();
        routes_ = std::exchange(o.routes_, nullptr);
        id_ = o.id_;
        number_ = o.number_;
      }
      return *this;
    }
    Route(const Route&) = delete;
    Route& operator=(const Route&) = delete;
    ~Route() { reset(); }
    // From now on the id's events are dropped (its context names nothing).
    void reset() noexcept;
    std::uint64_t number() const noexcept { return number_; }

   private:
    friend class Routes;
    Route(Routes* r, rdma_cm_id* id, std::uint64_t n) noexcept : routes_(r), id_(id), number_(n) {}
    Routes* routes_ = nullptr;
    rdma_cm_id* id_ = nullptr;
    std::uint64_t number_ = 0;
  };

  Routes() = default;
  Routes(const Routes&) = delete;
  Routes& operator=(const Routes&) = delete;

  // Routes `id`'s events to `endpoint`, which must outlive the Route.
  [[nodiscard]] Route add(rdma_cm_id* id, CmEndpoint& endpoint);
  // The endpoint of `id`, or null (none: its owner let go of it, or it never had one).
  CmEndpoint* find(const rdma_cm_id* id) const noexcept;
  std::size_t size() const noexcept { return routes_.size(); }

 private:
  std::uint64_t next_ = 1;
  std::unordered_map<std::uint64_t, CmEndpoint*> routes_;
};

}  // namespace vod::server::cm
