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
//   one that a requester's grace protects. The caller marks the segment's entry absent (a new
//   generation) at once, before anything else happens to the slot.
// - Grace is shared fairly: a requester (a connection, or a UDP client's address) protects only the
//   slots it asked for within `grace`, and only its `protected_share` most recent of them. So one
//   peer that asks for every resident segment again and again protects no more than its share, and
//   a fault of any other always finds a slot to evict, however many slots that peer touches.
// - A slot leaves quarantine only once `quarantine` has passed since its eviction, and since the end
//   of the `lease` that its last request gave (a client with windows posts Reads within it): longer
//   than any client's Read deadline, so no Read that sampled the old segment, or that was posted
//   within its lease, can still be in flight when the slot is refilled (and its windows freed),
//   whatever order a NIC samples memory in. An eviction within grace (over a requester's share)
//   empties the entry at once, but its slot is reused only after that.
// - `reserve` slots are kept free or quarantined by evicting ahead (plan_evictions), so that a
//   fault on a full cache rarely waits out a quarantine. Evicting ahead never takes a slot filled
//   less than kFillHold ago, whatever the grace: its requester has not had the time to read it, and
//   taking it would only make the fault again (with --cache-grace 0 a UDP sender could refault the
//   same segment over and over). Faults that wait for a slot may still take it.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace vod::server::cache {

using Clock = std::chrono::steady_clock;

// Who asked for a segment, for the fair share of grace: a connection's id, or a UDP client address's
// hash. 0 is "the server itself" (tests, internal reads), one requester like any other.
using Requester = std::uint64_t;

// The most slots one requester's grace protects when `active` requesters asked for something
// within grace, of `slots` slots with `reserve` kept free: an equal part of what is not reserved
// (at least 1), so that all of them together never protect every slot. A pure function, tested as
// a table (tests/unit/slot_table_test.cpp).
std::uint32_t protected_share(std::uint32_t slots, std::uint32_t reserve, std::uint32_t active) noexcept;

// A segment of a movie: the movie's id in the cache, and the segment's number.
struct SegmentKey {
  std::uint64_t movie = 0;
  std::uint32_t segment = 0;
  bool operator==(const SegmentKey&) const = default;
};

class SlotTable {
 public:
  static constexpr Clock::duration kFillHold = std::chrono::milliseconds(500);
  enum class State : std::uint8_t { free, filling, resident, quarantined };

  // `lease`: how long after a request a client may still post Reads of its slot (at least `grace`;
  // proto::window_use_ms); `grace` when not given.
  SlotTable(std::uint32_t slots, Clock::duration grace, Clock::duration quarantine, std::uint32_t reserve,
            std::optional<Clock::duration> lease = std::nullopt);

  std::uint32_t size() const noexcept { return static_cast<std::uint32_t>(slots_.size()); }
  State state(std::uint32_t slot) const { return slots_.at(slot).state; }
  const SegmentKey& key(std::uint32_t slot) const { return slots_.at(slot).key; }
  std::uint32_t count(State s) const noexcept { return counts_[static_cast<std::size_t>(s)]; }

  // A segment was asked for now by `who`: its slot counts as requested (for LRR, and for grace
  // within who's share).
  void touch(std::uint32_t slot, Clock::time_point now, Requester who = 0);
  // A free slot for `key`, now filling; nullopt when none is free (quarantines end in time, or
  // plan_evictions must make room). Quarantines that are over are ended first.
  std::optional<std::uint32_t> take(const SegmentKey& key, Clock::time_point now);
  void filled(std::uint32_t slot, Clock::time_point now, Requester who = 0);  // filling -> resident (requested now by who)
  void fill_failed(std::uint32_t slot);                                       // filling -> free

  struct Eviction {
    std::uint32_t slot;
    SegmentKey key;
    bool operator==(const Eviction&) const = default;
  };
  // Evicts resident slots, least recently requested first and none that a grace protects (within
  // its requester's share), until `reserve` plus `waiting` slots are free or quarantined
  // (`waiting`: faults that found no free slot, asked for by `waiting_for`, who count as active
  // requesters). The slots are quarantined; the caller marks their segments absent.
  // Of the `waiting`, `demanded` are faults a client waits for (not read-ahead): only those may
  // take a slot filled within kFillHold.
  std::vector<Eviction> plan_evictions(Clock::time_point now, std::uint32_t waiting, std::span<const Requester> waiting_for = {},
                                       std::optional<std::uint32_t> demanded = std::nullopt);
  // Fewer slots free or quarantined than the reserve: evicting ahead has work left (a fill hold or
  // a grace that ends will let it).
  bool short_of_reserve() const noexcept { return count(State::free) + count(State::quarantined) < reserve_; }
  // Slots evicted within their grace because their requester held more than its share (a metric).
  std::uint64_t over_share_evictions() const noexcept { return over_share_evictions_; }
  // Evicts `slot` now whatever its grace and lease (a test hook, or its movie left the library): its
  // quarantine counts from now. Returns what it held, or nullopt when it was not resident.
  std::optional<Eviction> evict(std::uint32_t slot, Clock::time_point now);
  // When the table next changes by itself (a quarantine ends, or a grace time that blocks an
  // eviction runs out); nullopt when nothing is pending.
  std::optional<Clock::time_point> next_change(Clock::time_point now) const;

 private:
  // A slot remembers its last few distinct requesters: enough for the viewers that share a popular
  // segment, and bounded whatever a peer does.
  static constexpr std::size_t kRequesters = 4;
  struct Request {
    Requester who = 0;
    Clock::time_point at{};
    bool used = false;
  };
  struct Slot {
    State state = State::free;
    SegmentKey key;
    Clock::time_point requested{};  // resident: last asked for (by anyone)
    Clock::time_point free_at{};    // quarantined: when it may be reused
    Clock::time_point filled_at{};  // resident: when its segment was read in
    std::array<Request, kRequesters> recent{};
  };
  void end_quarantines(Clock::time_point now);
  void note(Slot& s, Requester who, Clock::time_point now) noexcept;
  // Each resident slot: whether some requester's grace protects it, within that requester's share.
  std::vector<bool> protected_slots(Clock::time_point now, std::span<const Requester> waiting_for) const;
  void set_state(Slot& slot, State s) noexcept;

  std::vector<Slot> slots_;
  std::array<std::uint32_t, 4> counts_{};  // slots in each State: kept as they change, read every loop turn
  Clock::duration grace_, quarantine_, lease_;
  std::uint32_t reserve_;
  std::uint64_t over_share_evictions_ = 0;
};

}  // namespace vod::server::cache
