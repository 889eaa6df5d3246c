// SPDX-License-Identifier: LGPL-2.1-or-later
// Connections to the server, pooled per movie and shared by every file open on it (as vod-proxy
// pools them). A read goes to one connection of its movie, and never waits for another read:
//   - the connection whose reads ended near where this one starts (a sequential reader: the
//     kernel's read-ahead sends several reads of one stream at once, and they queue there);
//   - otherwise a new one, up to `sessions` per movie;
//   - otherwise the one with the fewest reads queued.
// Each connection runs on a thread of its own (MovieConnection). One BufferPool of registered
// memory serves them all when zero copy is on; when it runs dry a read lands in plain memory.
// A connection that failed beyond its reconnect time is dropped; its reads fail with EIO.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "movie_connection.hpp"

namespace vod::mount {

struct PoolLimits {
  unsigned sessions = 4;  // per movie
  std::chrono::milliseconds idle_close{60000};
  std::size_t readahead_bytes = 4u << 20;  // the engine's read-ahead for a sequential reader (into the ring)
  bool zero_copy = true;                   // reads land in registered buffers (--zero-copy auto)
  bool kernel_readahead = true;            // the page cache is on: the kernel reads ahead itself
  std::size_t buffer_bytes = 128u << 10;   // each registered buffer
  std::size_t max_buffers = 256;           // registered buffers out at once, all movies together
};

class MoviePool {
 public:
  MoviePool(client::Uri server, client::SessionOptions options, PoolLimits limits);
  ~MoviePool();

  // Reads `length` bytes of `movie` at `offset` (fewer only at its end); `done` runs later on a
  // connection's thread, with the bytes or an errno. Thread-safe, never waits.
  void read(const std::string& movie, std::uint64_t offset, std::size_t length, ReadDone done);

  // Closes connections unused for longer than idle_close, and those that failed.
  void close_idle();
  // Closes every connection (reads not answered yet fail with EIO); the destructor does too.
  void close();
  std::size_t connections() const;
  // The registered buffers' figures (zero copy), or all zero.
  client::BufferPool::Figures buffers() const;

 private:
  struct Connection {
    std::unique_ptr<MovieConnection> link;
    std::uint64_t next = 0;  // where the reads queued on it end
  };
  std::vector<client::ReadBuffer> take_buffers(std::size_t length);

  client::Uri server_;
  client::SessionOptions options_;
  PoolLimits limits_;
  std::shared_ptr<client::BufferPool> pool_;  // null: zero copy off
  mutable std::mutex mutex_;
  std::map<std::string, std::list<Connection>> movies_;
  std::uint64_t opened_ = 0;
};

}  // namespace vod::mount
