// SPDX-License-Identifier: LGPL-2.1-or-later
// Which arena slot holds which segment, and which slot a fault fills next: a pure decider (no I/O,
// no clock of its own), checked as a table by tests/unit/slot_table_test.cpp.
//
// A slot is free, filling (a disk read into it is under way), resident (it holds a segment), or
// quarantined. Its life:
//
//   free --take--> filling --filled--> resident --evict--> quarantined --(quarantine over)--> free
//                     \--fill_failed--> free
//
// - Eviction takes the resident slot least recently requested (asked for by any client), and never
//   one requested within `grace`. The caller marks the segment's entry absent (a new generation)
//   at once, before anything else happens to the slot.
// - A slot leaves quarantine only once `quarantine` has passed since its eviction: longer than any
//   client's Read deadline, so no Read that sampled the old segment can still be in flight when the
//   slot is refilled, whatever order a NIC samples memory in.
// - `reserve` slots are kept free or quarantined by evicting ahead (plan_evictions), so that a
//   fault on a full cache rarely waits out a quarantine.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

namespace vod::server::cache {

using Clock = std::chrono::steady_clock;

// A segment of a movie: the movie's id in the cache, and the segment's number.
struct SegmentKey {
  std::uint64_t movie = 0;
  std::uint32_t segment = 0;
  bool operator==(const SegmentKey&) const = default;
};

class SlotTable {
 public:
  enum class State : std::uint8_t { free, filling, resident, quarantined };

  SlotTable(std::uint32_t slots, Clock::duration grace, Clock::duration quarantine, std::uint32_t reserve);

  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(slots_.size()); }
  State state(std::uint32_t slot) const { return slots_.at(slot).state; }
  const SegmentKey& key(std::uint32_t slot) const { return slots_.at(slot).key; }
  std::uint32_t count(State s) const noexcept { return counts_[static_cast<std::size_t>(s)]; }

  // A segment was asked for now: its slot counts as requested (for LRR and grace).
  void touch(std::uint32_t slot, Clock::time_point now);
  // A free slot for `key`, now filling; nullopt when none is free (quarantines end in time, or
  // plan_evictions must make room). Quarantines that are over are ended first.
  std::optional<std::uint32_t> take(const SegmentKey& key, Clock::time_point now);
  void filled(std::uint32_t slot, Clock::time_point now);  // filling -> resident (requested now)
  void fill_failed(std::uint32_t slot);                     // filling -> free

  struct Eviction {
    std::uint32_t slot;
    SegmentKey key;
    bool operator==(const Eviction&) const = default;
  };
  // Evicts resident slots, least recently requested first and none within grace, until `reserve`
  // plus `waiting` slots are free or quarantined (`waiting`: faults that found no free slot).
  // The slots are quarantined; the caller marks their segments absent.
  std::vector<Eviction> plan_evictions(Clock::time_point now, std::uint32_t waiting);
  // Evicts `slot` now whatever its grace (a test hook, or its movie left the library). Returns
  // what it held, or nullopt when it was not resident.
  std::optional<Eviction> evict(std::uint32_t slot, Clock::time_point now);
  // When the table next changes by itself (a quarantine ends, or a grace time that blocks an
  // eviction runs out); nullopt when nothing is pending.
  std::optional<Clock::time_point> next_change(Clock::time_point now) const;

 private:
  struct Slot {
    State state = State::free;
    SegmentKey key;
    Clock::time_point requested{};  // resident: last asked for
    Clock::time_point free_at{};    // quarantined: when it may be reused
  };
  void end_quarantines(Clock::time_point now);
  void set_state(Slot& slot, State s) noexcept;

  std::vector<Slot> slots_;
  std::array<std::uint32_t, 4> counts_{};  // slots in each State: kept as they change, read every loop turn
  Clock::duration grace_, quarantine_;
  std::uint32_t reserve_;
};

}  // namespace vod::server::cache
