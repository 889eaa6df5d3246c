// SPDX-License-Identifier: LGPL-2.1-or-later
// One connection of vod-mount to the server for one movie, driven by a thread of its own: FUSE
// threads hand it reads (submit) and return at once; the thread opens the session, queues the reads
// as pread_asyncs, runs its progress, and calls each read's `done` from there when every byte of it
// has landed. So the kernel's read-ahead, which sends several reads of a file at once, keeps several
// of them in flight on one connection, as a reader that advertises its buffers ahead would.
//
// A read lands in registered buffers of the mount's BufferPool when it has some (zero copy: the
// Reads go straight into them and the reply to the kernel is written from them), else in plain
// memory, copied out of the session's ring. Its buffers stay alive until `done` has returned: the
// reply is written from them. A Session is used from this thread alone; submit() only queues and
// wakes it (Session::interrupt, an eventfd).
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "vod/client/buffer_pool.hpp"
#include "vod/client/session.hpp"

namespace vod::mount {

// What a read came to, for the reply: the bytes in order (valid only during the call), or an errno.
struct ReadReply {
  std::vector<std::span<const std::uint8_t>> pieces;
  std::size_t bytes = 0;
  int error = 0;        // 0, or the errno to answer with
  std::string message;  // why, when error != 0
};
using ReadDone = std::function<void(const ReadReply&)>;

struct ReadJob {
  std::uint64_t offset = 0;
  std::size_t length = 0;
  bool readahead = false;                      // the engine's own read-ahead (into the ring) for this reader
  std::vector<client::ReadBuffer> registered;  // zero copy: the destination, buffer after buffer
  std::vector<std::uint8_t> plain;             // otherwise
  ReadDone done;
};

class MovieConnection {
 public:
  // Starts the thread, which opens the session (uri names the movie); `pool` may be null.
  MovieConnection(client::Uri uri, client::SessionOptions options, std::shared_ptr<client::BufferPool> pool, std::string label);
  ~MovieConnection();  // stops the thread; reads not answered yet fail with EIO
  MovieConnection(const MovieConnection&) = delete;
  MovieConnection& operator=(const MovieConnection&) = delete;

  // Thread-safe. `job.done` runs on this connection's thread (or at once, when it has failed).
  void submit(ReadJob job);
  unsigned outstanding() const;
  bool failed() const;
  std::chrono::steady_clock::time_point last_used() const;

 private:
  struct Active {
    ReadJob job;
    std::vector<std::size_t> want, got;  // per piece of the destination
    unsigned remaining = 0;
  };
  void run();
  bool open();
  void start(ReadJob job);
  void finish(std::list<Active>::iterator it);
  void fail_all(int error, const std::string& why);

  const client::Uri uri_;
  const client::SessionOptions options_;
  const std::shared_ptr<client::BufferPool> pool_;
  const std::string label_;

  mutable std::mutex mutex_;  // guards the fields below, and session_'s existence for interrupt()
  std::deque<ReadJob> inbox_;
  unsigned outstanding_ = 0;
  bool stopping_ = false;
  bool failed_ = false;
  std::chrono::steady_clock::time_point used_;
  std::unique_ptr<client::Session> session_;

  std::list<Active> active_;  // this thread's: reads queued on the session
  std::thread thread_;        // last: starts once everything above exists
};

}  // namespace vod::mount
