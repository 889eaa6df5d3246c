// SPDX-License-Identifier: LGPL-2.1-or-later
// Memory for read engines' rings, kept for reuse within the process. A fresh ring's pages are
// faulted in and zeroed by the kernel when it is registered, which is most of what opening a
// session costs after the rdma_cm connect; a player that opens movie after movie (a zap, a proxy,
// a pipeline restarting) takes the last session's ring instead, already resident. A ring goes back
// to the pool only when its engine is destroyed, after its connection (QP and MR) is gone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace vod::client {

struct RingReturn {
  std::size_t bytes = 0;
  void operator()(std::uint8_t* ring) const noexcept;
};
using RingMemory = std::unique_ptr<std::uint8_t[], RingReturn>;

// A ring of at least `bytes` (in whole huge pages when it is at least one), from the pool when one
// of that size is spare. Throws std::bad_alloc.
RingMemory take_ring(std::size_t bytes);

// Spare rings held now (for tests).
std::size_t spare_rings() noexcept;

}  // namespace vod::client
