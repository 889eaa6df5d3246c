// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/slot_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace vod::server::cache {

SlotTable::SlotTable(std::uint32_t slots, Clock::duration grace, Clock::duration quarantine, std::uint32_t reserve)
    : slots_(slots), grace_(grace), quarantine_(quarantine), reserve_(std::min(reserve, slots)) {
  if (slots == 0) throw std::invalid_argument("a segment cache needs at least one slot");
  counts_[static_cast<std::size_t>(State::free)] = slots;
}

void SlotTable::set_state(Slot& slot, State s) noexcept {
  --counts_[static_cast<std::size_t>(slot.state)];
  ++counts_[static_cast<std::size_t>(s)];
  slot.state = s;
}

void SlotTable::touch(std::uint32_t slot, Clock::time_point now) {
  Slot& s = slots_.at(slot);
  if (s.state == State::resident) s.requested = std::max(s.requested, now);
}

void SlotTable::end_quarantines(Clock::time_point now) {
  if (count(State::quarantined) == 0) return;
  for (Slot& s : slots_)
    if (s.state == State::quarantined && now >= s.free_at) {
      set_state(s, State::free);
      s = Slot{};
    }
}

std::optional<std::uint32_t> SlotTable::take(const SegmentKey& key, Clock::time_point now) {
  end_quarantines(now);
  if (count(State::free) == 0) return std::nullopt;
  for (std::uint32_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].state == State::free) {
      set_state(slots_[i], State::filling);
      slots_[i].key = key;
      return i;
    }
  return std::nullopt;
}

void SlotTable::filled(std::uint32_t slot, Clock::time_point now) {
  Slot& s = slots_.at(slot);
  if (s.state != State::filling) throw std::logic_error("SlotTable::filled: the slot is not filling");
  set_state(s, State::resident);
  s.requested = now;
}

void SlotTable::fill_failed(std::uint32_t slot) {
  Slot& s = slots_.at(slot);
  if (s.state != State::filling) throw std::logic_error("SlotTable::fill_failed: the slot is not filling");
  set_state(s, State::free);
  s = Slot{};
}

std::vector<SlotTable::Eviction> SlotTable::plan_evictions(Clock::time_point now, std::uint32_t waiting) {
  end_quarantines(now);
  std::vector<Eviction> out;
  const std::uint64_t want = std::uint64_t{reserve_} + waiting;
  std::uint64_t room = count(State::free) + count(State::quarantined);
  if (room >= want) return out;
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].state == State::resident && now - slots_[i].requested >= grace_) candidates.push_back(i);
  // Least recently requested first; the slot number breaks ties, so the order is deterministic.
  std::sort(candidates.begin(), candidates.end(), [this](std::uint32_t a, std::uint32_t b) {
    return slots_[a].requested != slots_[b].requested ? slots_[a].requested < slots_[b].requested : a < b;
  });
  for (std::uint32_t i : candidates) {
    if (room >= want) break;
    out.push_back(*evict(i, now));
    ++room;
  }
  return out;
}

std::optional<SlotTable::Eviction> SlotTable::evict(std::uint32_t slot, Clock::time_point now) {
  Slot& s = slots_.at(slot);
  if (s.state != State::resident) return std::nullopt;
  const Eviction e{slot, s.key};
  set_state(s, State::quarantined);
  s.free_at = now + quarantine_;
  return e;
}

std::optional<Clock::time_point> SlotTable::next_change(Clock::time_point now) const {
  std::optional<Clock::time_point> next;
  auto consider = [&](Clock::time_point t) {
    if (t > now && (!next || t < *next)) next = t;
  };
  for (const Slot& s : slots_) {
    if (s.state == State::quarantined) consider(s.free_at);
    if (s.state == State::resident) consider(s.requested + grace_);
  }
  return next;
}

}  // namespace vod::server::cache
