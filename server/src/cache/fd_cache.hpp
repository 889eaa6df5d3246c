// SPDX-License-Identifier: LGPL-2.1-or-later
// The open files of the cached movies: opened when a disk read needs one, checked to be the file
// that was listed, and kept in least-recently-used order up to a capacity. A library of any size
// holds no more descriptors than that (each cached movie once held two for the server's life, so a
// library of about 500 files on a real disk ran out of RLIMIT_NOFILE's default 1024, and librdmacm
// then failed to open its device). A descriptor a read still uses is pinned by its Handle and never
// closed under it; those beyond the capacity go when their last Handle does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <stdexcept>
#include <utility>

#include "vod/unique_fd.hpp"

namespace vod::server::cache {

class CachedFile;

// The file at a cached movie's path is no longer the one that was listed (another inode, size or
// mtime): reading it would mix two versions of the file. A rescan (SIGHUP) lists the new one.
class FileChanged : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class FdCache {
 public:
  // `capacity`: descriptors kept open when no read uses them (at least 1).
  explicit FdCache(std::size_t capacity);
  FdCache(const FdCache&) = delete;
  FdCache& operator=(const FdCache&) = delete;

  class Handle {
   public:
    Handle() = default;
    Handle(Handle&& o) noexcept : cache_(std::exchange(o.cache_, nullptr)), key_(o.key_), fd_(o.fd_) {}
    Handle& operator=(Handle&& o) noexcept;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { reset(); }
    void reset() noexcept;
    int fd() const noexcept { return fd_; }

   private:
    friend class FdCache;
    using Key = std::pair<std::uint64_t, bool>;  // the file's id, O_DIRECT
    Handle(FdCache* c, Key k, int fd) noexcept : cache_(c), key_(k), fd_(fd) {}
    FdCache* cache_ = nullptr;
    Key key_{};
    int fd_ = -1;
  };

  // The descriptor disk reads of `file` use (O_DIRECT while the file allows it: an open refused
  // with EINVAL turns it off for that file), pinned until the Handle goes. Throws FileChanged, or
  // std::runtime_error naming open and errno ("out of file descriptors" for EMFILE and ENFILE).
  Handle open(CachedFile& file);

  std::size_t open_count() const noexcept { return entries_.size(); }
  std::size_t capacity() const noexcept { return capacity_; }
  std::uint64_t opens() const noexcept { return opens_; }

 private:
  using Key = Handle::Key;
  struct Entry {
    UniqueFd fd;
    unsigned pins = 0;
    std::list<Key>::iterator lru;  // position in lru_ (most recent at the front)
  };
  void unpin(const Key& k) noexcept;
  void trim() noexcept;  // closes unpinned descriptors beyond the capacity, least recently used first

  std::size_t capacity_;
  std::map<Key, Entry> entries_;
  std::list<Key> lru_;
  std::uint64_t opens_ = 0;
};

// The descriptors a cache of the server keeps at most: a quarter of RLIMIT_NOFILE's soft limit
// (the rest is for sockets, devices and the io_uring), between 16 and 4096.
std::size_t fd_cache_capacity() noexcept;

}  // namespace vod::server::cache
