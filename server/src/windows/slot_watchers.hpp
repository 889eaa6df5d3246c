// SPDX-License-Identifier: LGPL-2.1-or-later
// Which connections hold a memory window over each segment cache slot, with tokens, and the lease a
// window is handed out with (docs/segment-cache.md, "With tokens"; windows/slot_windows.hpp holds a
// connection's windows). Before a slot is refilled (its quarantine is over, and another segment is
// about to be read into it) every window over it is freed: an rkey a client kept reads nothing of
// the next segment.
//
// The lease (both sides compute it from the segment table's header): a client uses a window's rkey
// for Reads it posts within proto::window_use_ms() of sending the request it answered. The server keeps the
// window at least window_keep() after the answer, and a slot is refilled no sooner than the read
// deadline plus a margin after both its eviction and the end of the last request's lease
// (cache/slot_table.hpp): so no Read posted within the lease can meet a freed window unless it
// takes longer than the read deadline to reach the server.
#pragma once

#include <chrono>
#include <cstdint>
#include <vector>

#include "vod/protocol/segment_table.hpp"

namespace vod::server::windows {

using Clock = std::chrono::steady_clock;

// How long after answering the server keeps a window at least: its use, then a Read's deadline,
// then a margin.
constexpr std::chrono::milliseconds window_keep(std::uint32_t grace_ms, std::uint32_t read_deadline_ms) noexcept {
  return std::chrono::milliseconds(proto::window_use_ms(grace_ms, read_deadline_ms)) + std::chrono::milliseconds(read_deadline_ms) +
         std::chrono::milliseconds(500);
}

class SlotWatchers {
 public:
  class Holder {
   public:
    // `slot` is about to be refilled: drop the window over it now.
    virtual void slot_refilling(std::uint32_t slot) noexcept = 0;

   protected:
    ~Holder() = default;
  };

  explicit SlotWatchers(std::uint32_t slots) : by_slot_(slots) {}
  void watch(std::uint32_t slot, Holder& h);
  void unwatch(std::uint32_t slot, Holder& h) noexcept;
  // Every holder of a window over `slot` drops it, before this returns; they are forgotten.
  void refilling(std::uint32_t slot) noexcept;
  std::size_t holders(std::uint32_t slot) const { return by_slot_.at(slot).size(); }

 private:
  std::vector<std::vector<Holder*>> by_slot_;
};

}  // namespace vod::server::windows
