// SPDX-License-Identifier: LGPL-2.1-or-later
// Asynchronous reads of segments from disk into arena slots, with io_uring (Debian's liburing).
//
// Why io_uring and not a pool of threads doing pread: the server is one event loop. io_uring gives
// it many reads in flight from that one thread, with completions signalled on an eventfd that the
// loop already polls beside the CQ's channel, so there is no thread, lock or queue to hand results
// back across. Files are opened with O_DIRECT where the file system allows it (segments and slots
// are aligned), so a read fills the registered slot straight from the device and the page cache
// does not hold a second copy of what the arena holds; where it does not (tmpfs, 9p), reads go
// through the page cache.
#pragma once

#include <liburing.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <unordered_map>

#include "vod/unique_fd.hpp"

namespace vod::server::cache {

class DiskReader {
 public:
  // `result`: bytes read (all that were asked for, or fewer at the end of the file), or -errno.
  using Done = std::function<void(std::int64_t result)>;

  // A ring of `depth` entries. Throws std::runtime_error naming io_uring_queue_init and errno
  // (a kernel or a container without io_uring).
  explicit DiskReader(unsigned depth);
  ~DiskReader();
  DiskReader(const DiskReader&) = delete;
  DiskReader& operator=(const DiskReader&) = delete;

  // Readable when completions wait: call reap().
  int event_fd() const noexcept { return event_fd_.get(); }
  // Reads `length` bytes at `offset` of `fd` into `dest`; short reads are continued, so `done` sees
  // everything or the end of the file or an error. Reads beyond the ring's depth wait their turn.
  void read(int fd, std::uint8_t* dest, std::size_t length, std::uint64_t offset, Done done);
  // Runs the completions that are ready.
  void reap();
  std::size_t in_flight() const noexcept { return active_.size() + waiting_.size(); }

 private:
  struct Read {
    int fd;
    std::uint8_t* dest;
    std::size_t length;
    std::uint64_t offset;
    std::size_t done_bytes = 0;
    Done done;
  };
  void submit(std::uint64_t id);
  void start_waiting();

  io_uring ring_{};
  UniqueFd event_fd_;
  unsigned depth_;
  std::uint64_t next_id_ = 1;
  std::unordered_map<std::uint64_t, Read> active_;
  std::deque<Read> waiting_;
};

}  // namespace vod::server::cache
