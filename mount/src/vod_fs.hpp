// SPDX-License-Identifier: LGPL-2.1-or-later
// The file system libfuse3 calls (its high-level, path-based API): "/" lists the catalog, and each
// movie is a regular read-only file whose read() is a read through MoviePool. Nothing is writable.
// Live channels are not listed: a live channel has no size and no past, so a file of it would
// mislead cp, ffmpeg's seeking and the page cache (docs/mount.md).
#pragma once

#define FUSE_USE_VERSION 312
#include <fuse3/fuse.h>

#include "catalog_cache.hpp"
#include "movie_pool.hpp"

namespace vod::mount {

struct FsSettings {
  bool page_cache = true;            // keep_cache while the generation holds; off: direct_io
  double attr_seconds = 5;           // how long the kernel trusts names and sizes
  unsigned max_readahead = 1u << 20; // the kernel's read-ahead per file, with the page cache
};

class VodFs {
 public:
  VodFs(CatalogCache& catalog, MoviePool& pool, FsSettings settings) : catalog_(catalog), pool_(pool), settings_(settings) {}
  // The operations table; each callback finds this object through fuse_get_context()->private_data.
  static fuse_operations operations();

 private:
  static VodFs& self();
  const proto::CatalogEntry* find(const char* path, std::shared_ptr<const CatalogSnapshot>& snapshot);

  static void* init(fuse_conn_info* conn, fuse_config* cfg);
  static int getattr(const char* path, struct stat* st, fuse_file_info* fi);
  static int readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t offset, fuse_file_info* fi, fuse_readdir_flags flags);
  static int open(const char* path, fuse_file_info* fi);
  static int read(const char* path, char* buf, size_t size, off_t offset, fuse_file_info* fi);
  static int statfs(const char* path, struct statvfs* st);

  CatalogCache& catalog_;
  MoviePool& pool_;
  FsSettings settings_;
};

}  // namespace vod::mount
