// SPDX-License-Identifier: LGPL-2.1-or-later
// Registered memory a reader hands to the read engine ahead of time, so that RDMA Reads land
// straight in it (a direct transfer) instead of in the engine's ring and then being copied out (an
// indirect one). docs/client.md, "Zero copy".
//
// A pool belongs to a session (Session::buffers()) and outlives its connections: each new
// connection registers the pool's arenas on its own PD when its first direct Read needs them, as it
// does the ring, and the MRs go with the connection. So a buffer stays valid across reconnects and
// movie switches. Direct Reads go only into pool memory, never into arbitrary caller memory: no
// registration cache over caller memory is needed (rxe has no ODP, and a stale registration would
// put Reads into old pages), and on iWARP, where a Read's sink must allow REMOTE_WRITE, that
// exposure stays inside the pool.
//
// A posted Read cannot be recalled. The engine pins a buffer while a Read into it is in flight; a
// buffer given back while pinned becomes free only when its last Read has completed (or its
// connection is gone). With poisoning on (BufferPoolOptions::poison, or VOD_POISON_BUFFERS=1 in the
// environment) a buffer is filled with a pattern when it becomes free and checked when it is taken
// again: a Read that wrote into a buffer after it was handed back shows as a violation, which
// ASan cannot see (the NIC or the kernel wrote it).
//
// Thread-safe: a GStreamer pipeline gives buffers back from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "vod/client/ring_pool.hpp"

namespace vod::client {

struct BufferPoolOptions {
  std::size_t buffer_bytes = 1u << 20;  // each buffer (rounded up to 4 KiB)
  std::size_t buffers_per_arena = 8;    // the pool grows by an arena (one allocation, one MR) at a time
  std::size_t max_buffers = 32;         // take() returns nothing beyond this many out at once
  // Fill free buffers with a pattern and check it when they are taken again; default: from
  // VOD_POISON_BUFFERS in the environment (tests).
  std::optional<bool> poison;
};

class BufferPool;

// One buffer of a pool, handed out by take(); gives itself back when destroyed.
class ReadBuffer {
 public:
  ReadBuffer() = default;
  ReadBuffer(ReadBuffer&& o) noexcept;
  ReadBuffer& operator=(ReadBuffer&& o) noexcept;
  ReadBuffer(const ReadBuffer&) = delete;
  ReadBuffer& operator=(const ReadBuffer&) = delete;
  ~ReadBuffer() { release(); }

  std::uint8_t* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  std::span<std::uint8_t> bytes() const noexcept { return {data_, size_}; }
  explicit operator bool() const noexcept { return data_ != nullptr; }
  // Back to the pool now (free once no Read into it is in flight).
  void release() noexcept;

 private:
  friend class BufferPool;
  ReadBuffer(std::shared_ptr<BufferPool> pool, std::size_t index, std::uint8_t* data, std::size_t size) noexcept
      : pool_(std::move(pool)), index_(index), data_(data), size_(size) {}
  std::shared_ptr<BufferPool> pool_;
  std::size_t index_ = 0;
  std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

class BufferPool : public std::enable_shared_from_this<BufferPool> {
 public:
  static std::shared_ptr<BufferPool> make(const BufferPoolOptions& options = {});
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;
  ~BufferPool();

  // A free buffer, growing the pool by an arena when none is free and the bound allows; none when
  // max_buffers are out (or still pinned by Reads in flight). Throws std::bad_alloc.
  std::optional<ReadBuffer> take();
  std::size_t buffer_bytes() const noexcept { return buffer_bytes_; }
  std::size_t max_buffers() const noexcept { return max_buffers_; }

  // For the engine and its fetcher. True when [p, p + n) lies inside one buffer of this pool.
  bool holds(const std::uint8_t* p, std::size_t n) const noexcept;
  // A Read into the buffer holding p is posted / has completed (or can no longer write).
  void pin(const std::uint8_t* p) noexcept;
  void unpin(const std::uint8_t* p) noexcept;
  // True while a Read into b is in flight.
  bool pinned(const ReadBuffer& b) const noexcept;
  // The arena holding [p, p + n) (an index for arena()), or nullopt. Arenas never move.
  std::optional<std::size_t> arena_of(const std::uint8_t* p, std::size_t n) const noexcept;
  std::span<std::uint8_t> arena(std::size_t index) const noexcept;

  struct Figures {
    std::size_t buffers = 0;  // allocated
    std::size_t out = 0;      // held by readers
    std::size_t pinned = 0;   // with a Read in flight (held or given back)
    std::uint64_t poison_violations = 0;
  };
  Figures figures() const;
  // Checks every free buffer's pattern now (poisoning on); returns the violations found so far.
  std::uint64_t verify_poison();

 private:
  explicit BufferPool(const BufferPoolOptions& options);
  friend class ReadBuffer;
  void give_back(std::size_t index) noexcept;
  std::size_t index_of(const std::uint8_t* p) const noexcept;  // caller holds lock_; p inside the pool
  void make_free(std::size_t index) noexcept;                  // caller holds lock_
  bool poison_intact(std::size_t index) noexcept;              // caller holds lock_

  struct Entry {
    std::uint8_t* data = nullptr;
    bool out = false;   // held by a reader
    unsigned pins = 0;  // Reads in flight into it
  };
  const std::size_t buffer_bytes_;
  const std::size_t per_arena_;
  const std::size_t max_buffers_;
  const bool poison_;
  mutable std::mutex lock_;
  std::vector<RingMemory> arenas_;
  std::vector<Entry> entries_;
  std::vector<std::size_t> free_;
  std::uint64_t violations_ = 0;
};

// The tools' --zero-copy switch (and rdmasrc's zero-copy property): "auto" lets reads into
// registered buffers land there directly where the transport can (EngineOptions::direct = true),
// "off" forces every byte through the ring. Throws ClientError(usage) naming the choices.
bool parse_zero_copy(std::string_view value);

}  // namespace vod::client
