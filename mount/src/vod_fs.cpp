// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod_fs.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

#include "vod/log.hpp"

namespace vod::mount {

namespace {

void fill_file(struct stat* st, const proto::CatalogEntry& e, std::time_t mtime) {
  st->st_mode = S_IFREG | 0444;
  st->st_nlink = 1;
  st->st_size = static_cast<off_t>(e.size);
  st->st_blksize = 256 * 1024;
  st->st_blocks = static_cast<blkcnt_t>((e.size + 511) / 512);
  st->st_mtime = st->st_ctime = st->st_atime = mtime;
}

// The errno a failed read returns: the file is gone (ENOENT), or the server could not serve it
// within the reconnect time, or now serves other bytes under the name (EIO: never wrong bytes).
int errno_of(const client::ClientError& e) {
  switch (e.kind()) {
    case client::ErrorKind::unknown_movie: return ENOENT;
    case client::ErrorKind::out_of_range: return EINVAL;
    default: return EIO;
  }
}

}  // namespace

VodFs& VodFs::self() { return *static_cast<VodFs*>(fuse_get_context()->private_data); }

const proto::CatalogEntry* VodFs::find(const char* path, std::shared_ptr<const CatalogSnapshot>& snapshot) {
  if (path[0] != '/' || std::strchr(path + 1, '/')) return nullptr;
  snapshot = catalog_.get();
  return snapshot->catalog.find(path + 1);
}

void* VodFs::init(fuse_conn_info* conn, fuse_config* cfg) {
  VodFs& fs = *static_cast<VodFs*>(fuse_get_context()->private_data);
  cfg->entry_timeout = cfg->attr_timeout = fs.settings_.attr_seconds;
  cfg->negative_timeout = fs.settings_.attr_seconds;
  cfg->use_ino = 0;
  cfg->nullpath_ok = 0;
  // A movie's bytes never change within a catalog generation. With auto_cache, libfuse keeps the
  // pages of earlier opens unless the file's mtime or size changed, and the mtime is when its
  // generation was first seen: a rescan that replaced a movie invalidates them.
  cfg->kernel_cache = 0;
  cfg->auto_cache = fs.settings_.page_cache ? 1 : 0;
  cfg->direct_io = fs.settings_.page_cache ? 0 : 1;
  if (fs.settings_.page_cache) conn->max_readahead = std::min(conn->max_readahead, fs.settings_.max_readahead);
  conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
  return &fs;
}

int VodFs::getattr(const char* path, struct stat* st, fuse_file_info*) {
  std::memset(st, 0, sizeof *st);
  if (std::strcmp(path, "/") == 0) {
    const auto snapshot = self().catalog_.get();
    st->st_mode = S_IFDIR | 0555;
    st->st_nlink = 2;
    st->st_mtime = st->st_ctime = st->st_atime = snapshot->seen;
    return 0;
  }
  std::shared_ptr<const CatalogSnapshot> snapshot;
  const auto* e = self().find(path, snapshot);
  if (!e) return -ENOENT;
  fill_file(st, *e, snapshot->seen);
  return 0;
}

int VodFs::readdir(const char* path, void* buf, fuse_fill_dir_t fill, off_t, fuse_file_info*, fuse_readdir_flags) {
  if (std::strcmp(path, "/") != 0) return -ENOTDIR;
  const auto snapshot = self().catalog_.get();
  fill(buf, ".", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  fill(buf, "..", nullptr, 0, static_cast<fuse_fill_dir_flags>(0));
  for (const auto& e : snapshot->catalog.entries) {
    struct stat st {};
    fill_file(&st, e, snapshot->seen);
    if (fill(buf, e.name.c_str(), &st, 0, static_cast<fuse_fill_dir_flags>(0)) != 0) return -ENOMEM;
  }
  return 0;
}

int VodFs::open(const char* path, fuse_file_info* fi) {
  std::shared_ptr<const CatalogSnapshot> snapshot;
  if (!self().find(path, snapshot)) return -ENOENT;
  if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) return -EROFS;
  fi->direct_io = self().settings_.page_cache ? 0 : 1;
  return 0;
}

int VodFs::read(const char* path, char* buf, size_t size, off_t offset, fuse_file_info*) {
  if (offset < 0) return -EINVAL;
  std::shared_ptr<const CatalogSnapshot> snapshot;
  const auto* e = self().find(path, snapshot);
  if (!e) return -ENOENT;
  if (static_cast<std::uint64_t>(offset) >= e->size) return 0;
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(size, e->size - static_cast<std::uint64_t>(offset)));
  try {
    return static_cast<int>(self().pool_.read(e->name, static_cast<std::uint64_t>(offset), {reinterpret_cast<std::uint8_t*>(buf), want}));
  } catch (const client::ClientError& err) {
    log::error("mount", "read of '" + e->name + "' at " + std::to_string(offset) + " failed (" + client::to_string(err.kind()) + "): " + err.what());
    return -errno_of(err);
  } catch (const std::exception& err) {
    log::error("mount", "read of '" + e->name + "' at " + std::to_string(offset) + " failed: " + err.what());
    return -EIO;
  }
}

int VodFs::statfs(const char*, struct statvfs* st) {
  std::memset(st, 0, sizeof *st);
  const auto snapshot = self().catalog_.get();
  std::uint64_t bytes = 0;
  for (const auto& e : snapshot->catalog.entries) bytes += e.size;
  st->f_bsize = st->f_frsize = 4096;
  st->f_blocks = (bytes + 4095) / 4096;
  st->f_files = snapshot->catalog.entries.size();
  st->f_namemax = 128;
  st->f_flag = ST_RDONLY | ST_NOSUID;
  return 0;
}

fuse_operations VodFs::operations() {
  fuse_operations ops{};
  ops.init = &VodFs::init;
  ops.getattr = &VodFs::getattr;
  ops.readdir = &VodFs::readdir;
  ops.open = &VodFs::open;
  ops.read = &VodFs::read;
  ops.statfs = &VodFs::statfs;
  return ops;
}

}  // namespace vod::mount
