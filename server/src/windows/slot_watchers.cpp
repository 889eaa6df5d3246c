// SPDX-License-Identifier: LGPL-2.1-or-later
#include "windows/slot_watchers.hpp"

#include <algorithm>

namespace vod::server::windows {

void SlotWatchers::watch(std::uint32_t slot, Holder& h) {
  auto& holders = by_slot_.at(slot);
  if (std::find(holders.begin(), holders.end(), &h) == holders.end()) holders.push_back(&h);
}

void SlotWatchers::unwatch(std::uint32_t slot, Holder& h) noexcept {
  if (slot >= by_slot_.size()) return;
  std::erase(by_slot_[slot], &h);
}

void SlotWatchers::refilling(std::uint32_t slot) noexcept {
  if (slot >= by_slot_.size()) return;
  std::vector<Holder*> holders;
  holders.swap(by_slot_[slot]);
  for (Holder* h : holders) h->slot_refilling(slot);
}

}  // namespace vod::server::windows
