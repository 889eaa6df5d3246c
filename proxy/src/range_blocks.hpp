// SPDX-License-Identifier: LGPL-2.1-or-later
// The two blocks a movie response streams its byte range through, and which of them is read and
// written next: a pure state machine (no socket, no RDMA; tests/unit/proxy_http_test.cpp), driven by
// HttpConnection. A block is free, reading (its Read issued) or ready (its bytes landed); blocks end
// at chunk boundaries, so each is one whole block of the session's and lands straight in its
// registered memory whatever the Range's start; they are written in order, and the next Read is
// issued only when the socket has taken a block, so a paused player stops the Reads for its
// response and memory stays bounded. The blocks' memory exists only while a range is streamed.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "vod/client/buffer_pool.hpp"

namespace vod::proxy {

class RangeBlocks {
 public:
  struct Block {
    enum class State { free, reading, ready };
    // chunk_bytes: registered memory the Reads land in directly, or plain memory when the proxy's
    // bound on those is reached.
    client::ReadBuffer registered;
    std::unique_ptr<std::uint8_t[]> plain;
    std::uint8_t* data() const noexcept { return registered ? registered.data() : plain.get(); }
    State state = State::free;
    std::uint64_t offset = 0;
    std::size_t length = 0;
    std::uint64_t read_id = 0;  // its Read's, while reading (to cancel it)
  };
  // Where registered blocks come from (RdmaPool::take_block); nullopt: use plain memory.
  using Take = std::function<std::optional<client::ReadBuffer>()>;

  explicit RangeBlocks(std::size_t chunk_bytes) noexcept : chunk_(chunk_bytes) {}

  // A new range [offset, offset + length): memory for both blocks (from `take` where it can).
  void start(std::uint64_t offset, std::uint64_t length, const Take& take);
  // Gives the memory back; a block whose Read is still landing keeps its memory until it has.
  void release() noexcept;

  // The next block to read (free, and bytes left to read): now reading, with its offset and length
  // set; null when there is none.
  Block* next_to_read() noexcept;
  // The block whose bytes go out next (ready, and next in order); null when there is none.
  Block* next_to_write() noexcept;
  // `b`'s bytes were written: it is free again. True when the range is complete.
  bool written(Block& b) noexcept;

  // Runs f(block) for each block whose Read is still landing.
  template <class F>
  void each_reading(F f) const {
    for (const auto& b : blocks_)
      if (b.state == Block::State::reading) f(b);
  }
  std::uint64_t sent() const noexcept { return next_write_ - begin_; }  // bytes of the range written
  std::uint64_t position() const noexcept { return next_write_; }       // the next byte to write

 private:
  std::size_t chunk_;
  std::array<Block, 2> blocks_;
  std::uint64_t begin_ = 0, next_read_ = 0, next_write_ = 0, end_ = 0;
};

}  // namespace vod::proxy
