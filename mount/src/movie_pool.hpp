// SPDX-License-Identifier: LGPL-2.1-or-later
// Connections to the server, pooled per movie and shared by every file open on it (as vod-proxy
// pools them). FUSE calls read() from several threads; each read borrows one connection of its
// movie for its duration:
//   - the connection whose reads ended near where this one starts (a sequential reader: its
//     read-ahead already holds these bytes), waiting for it if it is busy;
//   - otherwise an idle one, with read-ahead off for it (a random access);
//   - otherwise a new one, up to `sessions` per movie; beyond that the read waits.
// A connection that fails beyond its reconnect time is dropped; the read fails with EIO.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>

#include "vod/client/session.hpp"

namespace vod::mount {

struct PoolLimits {
  unsigned sessions = 4;                   // per movie
  std::chrono::milliseconds idle_close{60000};
  std::size_t readahead_bytes = 4u << 20;  // for a sequential reader
};

class MoviePool {
 public:
  MoviePool(client::Uri server, client::SessionOptions options, PoolLimits limits);
  ~MoviePool();

  // Reads dest.size() bytes of `movie` at `offset` (fewer only at its end). Thread-safe. Throws
  // ClientError (unknown_movie, connection_lost, movie_changed, ...).
  std::size_t read(const std::string& movie, std::uint64_t offset, std::span<std::uint8_t> dest);

  // Closes connections unused for longer than idle_close.
  void close_idle();
  std::size_t connections() const;

 private:
  struct Connection {
    std::unique_ptr<client::Session> session;
    std::uint64_t next = UINT64_MAX;  // where its reads have got to (set when a read starts)
    bool busy = false;
    std::chrono::steady_clock::time_point used;
  };
  struct Movie {
    std::list<Connection> connections;  // stable addresses while borrowed
    unsigned opening = 0;               // connections being opened (counted against the limit)
  };
  Connection& borrow(const std::string& movie, std::uint64_t offset, std::size_t length, bool& sequential);
  void give_back(const std::string& movie, Connection& c, bool failed);

  client::Uri server_;
  client::SessionOptions options_;
  PoolLimits limits_;
  mutable std::mutex mutex_;
  std::condition_variable returned_;
  std::map<std::string, Movie> movies_;
};

}  // namespace vod::mount
