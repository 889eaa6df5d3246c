// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/slot_table.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

namespace vod::server::cache {

std::uint32_t protected_share(std::uint32_t slots, std::uint32_t reserve, std::uint32_t active) noexcept {
  const std::uint32_t usable = slots > reserve ? slots - reserve : 0;
  return std::max<std::uint32_t>(1, usable / std::max<std::uint32_t>(active, 1));
}

SlotTable::SlotTable(std::uint32_t slots, Clock::duration grace, Clock::duration quarantine, std::uint32_t reserve,
                     std::optional<Clock::duration> lease)
    : slots_(slots),
      grace_(grace),
      quarantine_(quarantine),
      lease_(std::max(grace, lease.value_or(grace))),
      reserve_(std::min(reserve, slots)) {
  if (slots == 0) throw std::invalid_argument("a segment cache needs at least one slot");
  counts_[static_cast<std::size_t>(State::free)] = slots;
}

void SlotTable::set_state(Slot& slot, State s) noexcept {
  --counts_[static_cast<std::size_t>(slot.state)];
  ++counts_[static_cast<std::size_t>(s)];
  slot.state = s;
}

void SlotTable::note(Slot& s, Requester who, Clock::time_point now) noexcept {
  s.requested = std::max(s.requested, now);
  Request* oldest = &s.recent[0];
  for (Request& r : s.recent) {
    if (r.used && r.who == who) {
      r.at = std::max(r.at, now);
      return;
    }
    if (!r.used || (oldest->used && r.at < oldest->at)) oldest = &r;
  }
  *oldest = Request{who, now, true};
}

void SlotTable::touch(std::uint32_t slot, Clock::time_point now, Requester who) {
  Slot& s = slots_.at(slot);
  if (s.state == State::resident) note(s, who, now);
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

void SlotTable::filled(std::uint32_t slot, Clock::time_point now, Requester who) {
  Slot& s = slots_.at(slot);
  if (s.state != State::filling) throw std::logic_error("SlotTable::filled: the slot is not filling");
  set_state(s, State::resident);
  s.recent = {};
  s.filled_at = now;
  note(s, who, now);
}

std::vector<bool> SlotTable::protected_slots(Clock::time_point now, std::span<const Requester> waiting_for) const {
  // Each requester's slots within grace, most recent first; it protects the first `share` of them.
  std::unordered_map<Requester, std::vector<std::pair<Clock::time_point, std::uint32_t>>> asked;
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    const Slot& s = slots_[i];
    if (s.state != State::resident) continue;
    for (const Request& r : s.recent)
      if (r.used && now - r.at < grace_) asked[r.who].emplace_back(r.at, i);
  }
  // Whoever waits for a slot is active too: a newcomer's first fault is what the share is for.
  for (Requester who : waiting_for) asked.try_emplace(who);
  const std::uint32_t share = protected_share(size(), reserve_, static_cast<std::uint32_t>(asked.size()));
  std::vector<bool> kept(slots_.size(), false);
  for (auto& [who, list] : asked) {
    if (list.size() > share) {  // its most recent `share`; the slot number breaks ties
      std::nth_element(list.begin(), list.begin() + share, list.end(),
                       [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
      list.resize(share);
    }
    for (const auto& [at, slot] : list) kept[slot] = true;
  }
  return kept;
}

void SlotTable::fill_failed(std::uint32_t slot) {
  Slot& s = slots_.at(slot);
  if (s.state != State::filling) throw std::logic_error("SlotTable::fill_failed: the slot is not filling");
  set_state(s, State::free);
  s = Slot{};
}

std::vector<SlotTable::Eviction> SlotTable::plan_evictions(Clock::time_point now, std::uint32_t waiting,
                                                           std::span<const Requester> waiting_for, std::optional<std::uint32_t> demanded) {
  end_quarantines(now);
  std::vector<Eviction> out;
  const std::uint64_t want = std::uint64_t{reserve_} + waiting;
  std::uint64_t room = count(State::free) + count(State::quarantined);
  if (room >= want) return out;
  const std::vector<bool> kept = protected_slots(now, waiting_for);
  std::vector<std::uint32_t> candidates;
  for (std::uint32_t i = 0; i < slots_.size(); ++i)
    if (slots_[i].state == State::resident && !kept[i]) candidates.push_back(i);
  // Least recently requested first; the slot number breaks ties, so the order is deterministic.
  std::sort(candidates.begin(), candidates.end(), [this](std::uint32_t a, std::uint32_t b) {
    return slots_[a].requested != slots_[b].requested ? slots_[a].requested < slots_[b].requested : a < b;
  });
  // Slots filled within kFillHold go last, and only for faults that wait, never for the reserve.
  std::stable_partition(candidates.begin(), candidates.end(), [&](std::uint32_t i) { return now - slots_[i].filled_at >= kFillHold; });
  for (std::uint32_t i : candidates) {
    if (room >= want) break;
    if (now - slots_[i].filled_at < kFillHold && room >= demanded.value_or(waiting)) break;
    if (now - slots_[i].requested < grace_) ++over_share_evictions_;  // its requester held more than its share
    out.push_back(*evict(i, now));
    // Reused only once the last request's lease is over too (an eviction within grace comes before it).
    slots_[i].free_at = std::max(now, slots_[i].requested + lease_) + quarantine_;
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
    if (s.state == State::resident) {
      consider(s.requested + grace_);
      consider(s.filled_at + kFillHold);  // the reserve may take it from then on
    }
  }
  return next;
}

}  // namespace vod::server::cache
