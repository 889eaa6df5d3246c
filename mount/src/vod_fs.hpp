// SPDX-License-Identifier: LGPL-2.1-or-later
// The file system libfuse3 calls, through its low-level, inode-based API: the catalog's folders are
// directories ("/" is its top) and each movie is a regular read-only file. Nothing is writable. Live channels are not listed: a
// live channel has no size and no past, so a file of it would mislead cp, ffmpeg's seeking and the
// page cache (docs/mount.md).
//
// The low-level API rather than the path-based one: a read is answered later, from the connection
// thread that read it (MoviePool), and the reply is written to the kernel straight from the memory
// the RDMA Reads landed in (fuse_reply_iov over the registered buffers): no copy in user space. The
// high-level API takes the reply's memory as its own and frees it, so it would need a copy.
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse3/fuse_lowlevel.h>

#include <cstdint>
#include <ctime>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog_cache.hpp"
#include "movie_pool.hpp"

namespace vod::mount {

struct FsSettings {
  bool page_cache = true;             // keep_cache while a file's generation holds; off: direct_io
  double attr_seconds = 5;            // how long the kernel trusts names and sizes
  unsigned max_readahead = 1u << 20;  // the kernel's read-ahead per file, with the page cache
};

// Movie names and folders and their inode numbers: a name keeps its number for the mount's lifetime
// (across catalog generations), so the kernel's cached entries stay right. A folder is kept as its
// path and a '/' ("Films/"), which no movie name ends in. Grows with the names ever seen.
class InodeTable {
 public:
  fuse_ino_t ino_of(const std::string& name);
  const std::string* name_of(fuse_ino_t ino) const;  // the pointer stays valid

 private:
  mutable std::mutex mutex_;
  std::map<std::string, fuse_ino_t> by_name_;
  std::map<fuse_ino_t, const std::string*> by_ino_;
};

class VodFs {
 public:
  VodFs(CatalogCache& catalog, MoviePool& pool, FsSettings settings) : catalog_(catalog), pool_(pool), settings_(settings) {}
  // The operations table; each callback finds this object through fuse_req_userdata().
  static fuse_lowlevel_ops operations();

 private:
  static VodFs& self(fuse_req_t req) { return *static_cast<VodFs*>(fuse_req_userdata(req)); }
  // The movie of `ino` in the current catalog, or null (a folder, an unknown number, a movie gone).
  const proto::CatalogEntry* find(fuse_ino_t ino, const CatalogSnapshot& snapshot) const;
  // The folder of `ino` ("" for the root) in `snapshot`, or nullopt (a movie, a folder gone).
  std::optional<std::string> folder_of(fuse_ino_t ino, const CatalogSnapshot& snapshot) const;
  struct stat attributes(const proto::CatalogEntry& e, std::time_t mtime, fuse_ino_t ino) const;

  static void init(void* userdata, fuse_conn_info* conn);
  static void lookup(fuse_req_t req, fuse_ino_t parent, const char* name);
  static void getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  static void readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi);
  static void open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi);
  static void read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info* fi);
  static void statfs(fuse_req_t req, fuse_ino_t ino);

  CatalogCache& catalog_;
  MoviePool& pool_;
  FsSettings settings_;
  InodeTable inodes_;
  // auto_cache, as libfuse's high-level API does it: the kernel keeps a file's cached pages at an
  // open only when its size and mtime (its generation's) are what they were at the last open.
  std::mutex opened_mutex_;
  std::map<fuse_ino_t, std::pair<std::uint64_t, std::time_t>> opened_;
};

}  // namespace vod::mount
