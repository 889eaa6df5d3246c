// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/fd_cache.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "cache/cached_file.hpp"
#include "cache/index_store.hpp"
#include "open_resolved.hpp"

namespace vod::server::cache {

FdCache::FdCache(std::size_t capacity) : capacity_(std::max<std::size_t>(1, capacity)) {}

FdCache::Handle& FdCache::Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    cache_ = std::exchange(o.cache_, nullptr);
    key_ = o.key_;
    fd_ = o.fd_;
  }
  return *this;
}

void FdCache::Handle::reset() noexcept {
  if (cache_) cache_->unpin(key_);
  cache_ = nullptr;
  fd_ = -1;
}

void FdCache::unpin(const Key& k) noexcept {
  auto it = entries_.find(k);
  if (it == entries_.end()) return;
  if (it->second.pins > 0) --it->second.pins;
  trim();
}

void FdCache::trim() noexcept {
  // From the least recently used end: pinned descriptors stay (a read is using them).
  for (auto it = lru_.end(); entries_.size() > capacity_ && it != lru_.begin();) {
    --it;
    auto e = entries_.find(*it);
    if (e->second.pins > 0) continue;
    entries_.erase(e);
    it = lru_.erase(it);
  }
}

namespace {

std::string open_failure(const std::string& path, int err) {
  if (err == EMFILE || err == ENFILE) {
    rlimit r{};
    getrlimit(RLIMIT_NOFILE, &r);
    return "open " + path + ": out of file descriptors (" + std::strerror(err) + "; RLIMIT_NOFILE " + std::to_string(r.rlim_cur) + ")";
  }
  return "open " + path + ": " + std::strerror(err);
}

}  // namespace

FdCache::Handle FdCache::open(CachedFile& file) {
  Key key{file.id(), file.direct()};
  if (auto it = entries_.find(key); it != entries_.end()) {
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    ++it->second.pins;
    return Handle(this, key, it->second.fd.get());
  }
  UniqueFd fd(open_resolved(file.path(), O_RDONLY | O_CLOEXEC | (key.second ? O_DIRECT : 0)));
  if (!fd && key.second && errno == EINVAL) {  // tmpfs and some network file systems refuse O_DIRECT
    file.stop_direct();
    return open(file);
  }
  if (!fd) throw std::runtime_error(open_failure(file.path(), errno));
  ++opens_;
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) throw std::runtime_error("fstat " + file.path() + ": " + std::strerror(errno));
  if (!FileIdentity{{}, file.size(), file.mtime_ns(), file.inode()}.same_version(st))
    throw FileChanged(file.path() +
                      " changed since it was listed (inode, size or mtime): not read, so that no two versions of it are served as one; a "
                      "rescan (SIGHUP) lists the new one");
  lru_.push_front(key);
  auto& e = entries_[key];
  e.fd = std::move(fd);
  e.pins = 1;
  e.lru = lru_.begin();
  const int raw = e.fd.get();
  trim();
  return Handle(this, key, raw);
}

std::size_t fd_cache_capacity() noexcept {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 4096;
  return std::clamp<std::size_t>(static_cast<std::size_t>(r.rlim_cur / 4), 16, 4096);
}

}  // namespace vod::server::cache
