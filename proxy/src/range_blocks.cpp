// SPDX-License-Identifier: LGPL-2.1-or-later
#include "range_blocks.hpp"

#include <algorithm>

namespace vod::proxy {

void RangeBlocks::start(std::uint64_t offset, std::uint64_t length, const Take& take) {
  begin_ = next_read_ = next_write_ = offset;
  end_ = offset + length;
  for (auto& b : blocks_) {
    if (b.data()) continue;
    if (auto r = take ? take() : std::nullopt) b.registered = std::move(*r);
    // Not zero-filled: every byte sent was written by a Read first.
    else b.plain = std::make_unique_for_overwrite<std::uint8_t[]>(chunk_);
  }
}

void RangeBlocks::release() noexcept {
  for (auto& b : blocks_)
    if (b.state != Block::State::reading) {
      b.registered.release();
      b.plain.reset();
    }
}

RangeBlocks::Block* RangeBlocks::next_to_read() noexcept {
  if (next_read_ >= end_) return nullptr;
  for (auto& b : blocks_) {
    if (b.state != Block::State::free) continue;
    b.state = Block::State::reading;
    b.offset = next_read_;
    const std::uint64_t to_boundary = chunk_ - next_read_ % chunk_;  // the first runs up to the next boundary
    b.length = static_cast<std::size_t>(std::min<std::uint64_t>(to_boundary, end_ - next_read_));
    next_read_ += b.length;
    return &b;
  }
  return nullptr;
}

RangeBlocks::Block* RangeBlocks::next_to_write() noexcept {
  for (auto& b : blocks_)
    if (b.state == Block::State::ready && b.offset == next_write_) return &b;
  return nullptr;
}

bool RangeBlocks::written(Block& b) noexcept {
  next_write_ += b.length;
  b.state = Block::State::free;
  return next_write_ >= end_;
}

}  // namespace vod::proxy
