// SPDX-License-Identifier: LGPL-2.1-or-later
// The read engine's block cache: the ring's slots, which block of which region each one holds or
// is fetching, and the epoch that tells a fetch posted before a seek from one posted after. It does
// no I/O: the planner (read_planner.hpp) claims slots, the driver (read_engine.cpp) fetches into
// them and records what landed, requests (request_queue.hpp) are served from them.
//
// Slot states:   free --claim--> in_flight --landed, same epoch--> ready --evicted--> free
//                                    \--landed, older epoch (or failed)--> free
//
// A slot of a block fetched in parts (ramp-up, read_engine.hpp) has a head [head_from, head_to)
// fetched first, alone, and the rest (one or two parts) once a reader has come for it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "vod/client/fetcher.hpp"

namespace vod::client::engine {

// A block's key: its region in the top byte, its number below. Keys of one region sort by block.
inline constexpr unsigned kRegionShift = 56;
inline std::uint64_t block_key(Region r, std::uint64_t block) noexcept {
  return (std::uint64_t{static_cast<std::uint8_t>(r)} << kRegionShift) | block;
}
inline Region region_of(std::uint64_t key) noexcept { return static_cast<Region>(key >> kRegionShift); }
inline std::uint64_t block_of(std::uint64_t key) noexcept { return key & ((std::uint64_t{1} << kRegionShift) - 1); }

enum class SlotState : std::uint8_t { free, in_flight, ready };

struct Slot {
  SlotState state = SlotState::free;
  bool readahead = false;                    // claimed for read-ahead, not for a waiting request
  bool head_in_flight = false;               // its head fetch has not completed
  bool head_ready = false;                   // in flight, but its head [head_from, head_to) has landed
  bool head_used = false;                    // a request has taken bytes from the landed head
  std::uint8_t parts = 0;                    // fetches of the block other than the head still in flight
  std::uint32_t head_from = 0, head_to = 0;  // head_to > 0: the block was fetched in parts
  std::uint64_t key = 0;
  std::uint32_t epoch = 0;
  std::uint32_t length = 0;                      // the block's bytes (less than a chunk at the region's end)
  std::uint64_t last_use = 0;                    // for eviction: least recently used first
  std::chrono::steady_clock::time_point posted;  // for the Read latency (set by the driver)
};

class BlockCache {
 public:
  explicit BlockCache(std::size_t slots) : slots_(slots) {}

  std::size_t size() const noexcept { return slots_.size(); }
  Slot& slot(std::size_t s) noexcept { return slots_[s]; }
  const Slot& slot(std::size_t s) const noexcept { return slots_[s]; }
  std::uint32_t epoch() const noexcept { return epoch_; }

  // The slot of block `key` this epoch, cached or its fetch in flight.
  std::optional<std::size_t> find(std::uint64_t key) const noexcept {
    const auto it = block_slot_.find(key);
    return it == block_slot_.end() ? std::nullopt : std::optional<std::size_t>(it->second);
  }
  bool cached_or_coming(std::uint64_t key) const noexcept { return block_slot_.count(key) != 0; }

  // A slot to fetch into: a free one, else the least recently used ready one that `pinned(slot)`
  // does not hold, which is evicted. -1 when there is none.
  template <class Pinned>
  int take_slot(Pinned&& pinned) {
    int best = -1;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      const Slot& slot = slots_[s];
      if (slot.state == SlotState::free) return static_cast<int>(s);
      if (slot.state != SlotState::ready || pinned(slot)) continue;
      if (best < 0 || slot.last_use < slots_[static_cast<std::size_t>(best)].last_use) best = static_cast<int>(s);
    }
    if (best >= 0) drop(static_cast<std::size_t>(best));
    return best;
  }
  // Slot `s` (from take_slot) holds block `key` from now on, its fetch in flight this epoch.
  Slot& claim(std::size_t s, std::uint64_t key, std::uint32_t length, bool readahead);
  // A request took bytes from slot `s`.
  void touch(std::size_t s) noexcept { slots_[s].last_use = ++use_clock_; }

  void drop(std::size_t s) noexcept;  // free, and forgotten as its block's slot
  void drop_all() noexcept;           // the connection is gone: every slot free, a new epoch
  // A seek, a switch or a new descriptor: a new epoch. Cached blocks are dropped, except slot
  // `keep` (>= 0), re-stamped to the new epoch. Fetches in flight either are recalled (`recall`:
  // recalled(slot) runs, then the slot is free) or land into their slots later and are discarded.
  template <class Recalled>
  void invalidate(int keep, bool recall, Recalled&& recalled) {
    ++epoch_;
    for (std::size_t s = 0; s < slots_.size(); ++s) {
      Slot& slot = slots_[s];
      if (static_cast<int>(s) == keep) {
        slot.epoch = epoch_;
      } else if (slot.state == SlotState::ready) {
        drop(s);
      } else if (slot.state == SlotState::in_flight) {
        if (recall) {  // nothing more lands in it: free at once
          recalled(s);
          drop(s);
        } else if (slot.parts == 0 && !slot.head_in_flight) {
          drop(s);  // a landed head whose rest was never posted: nothing more comes into it
        } else {
          forget(s);  // lands, then is discarded
        }
      }
    }
  }

  // Read-ahead fetches in flight.
  unsigned readahead_in_flight() const noexcept;

 private:
  // Slot `s` is no longer its block's slot. Only when the map says it is: a stale fetch still
  // landing may share its block with a newer slot (the one a seek keeps), which must stay.
  void forget(std::size_t s) noexcept;

  std::vector<Slot> slots_;
  std::unordered_map<std::uint64_t, std::size_t> block_slot_;  // blocks cached or in flight, this epoch
  std::uint32_t epoch_ = 1;
  std::uint64_t use_clock_ = 0;
};

}  // namespace vod::client::engine
