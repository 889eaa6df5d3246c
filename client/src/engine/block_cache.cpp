// SPDX-License-Identifier: LGPL-2.1-or-later
#include "engine/block_cache.hpp"

namespace vod::client::engine {

Slot& BlockCache::claim(std::size_t s, std::uint64_t key, std::uint32_t length, bool readahead) {
  Slot& slot = slots_[s];
  slot = {};
  slot.state = SlotState::in_flight;
  slot.readahead = readahead;
  slot.key = key;
  slot.epoch = epoch_;
  slot.length = length;
  slot.last_use = ++use_clock_;
  block_slot_[key] = s;
  return slot;
}

void BlockCache::forget(std::size_t s) noexcept {
  auto it = block_slot_.find(slots_[s].key);
  if (it != block_slot_.end() && it->second == s) block_slot_.erase(it);
}

void BlockCache::drop(std::size_t s) noexcept {
  forget(s);
  slots_[s].state = SlotState::free;
}

void BlockCache::drop_all() noexcept {
  for (auto& slot : slots_) slot.state = SlotState::free;
  block_slot_.clear();
  ++epoch_;
}

unsigned BlockCache::readahead_in_flight() const noexcept {
  unsigned n = 0;
  for (const Slot& slot : slots_) n += slot.state == SlotState::in_flight && slot.readahead;
  return n;
}

}  // namespace vod::client::engine
