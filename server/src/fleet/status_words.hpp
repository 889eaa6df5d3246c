// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's status words (docs/protocol.md, "Server status"): a heartbeat its event loop advances
// every proto::kHeartbeatPeriodMs, and whether it is draining, written into every catalog it still
// has registered or offers over UDP. Clients in a fleet read them one-sided: a heartbeat that stops
// tells them the process no longer serves while its NIC still answers Reads (SIGSTOP, a stuck
// loop), and `draining` that they should move to another member before it stops.
//
// Catalogs are watched, not owned: one whose owner (its registration, its UDP generation) is gone
// is forgotten at the next tick.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "vod/protocol/catalog_layout.hpp"

namespace vod::server::fleet {

class StatusWords {
 public:
  // From now on `catalog` (a whole catalog region, alive while `owner` is) carries the status; it is
  // written at once.
  void watch(std::span<std::uint8_t> catalog, std::weak_ptr<const void> owner);
  // The heartbeat advanced in every catalog still alive (never to 0, which means "no heartbeat").
  void tick();
  // Draining from now on, in every catalog at once.
  void set_draining();
  const proto::ServerStatus& status() const noexcept { return status_; }
  std::size_t watched() const noexcept { return watched_.size(); }

 private:
  void write_all();
  struct Watched {
    std::span<std::uint8_t> bytes;
    std::weak_ptr<const void> owner;
  };
  std::vector<Watched> watched_;
  proto::ServerStatus status_{1, false};
};

}  // namespace vod::server::fleet
