// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod_fs.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vod/log.hpp"

namespace vod::mount {

fuse_ino_t InodeTable::ino_of(const std::string& name) {
  std::lock_guard lock(mutex_);
  auto [it, added] = by_name_.try_emplace(name, FUSE_ROOT_ID + 1 + by_name_.size());
  if (added) by_ino_[it->second] = &it->first;
  return it->second;
}

const std::string* InodeTable::name_of(fuse_ino_t ino) const {
  std::lock_guard lock(mutex_);
  const auto it = by_ino_.find(ino);
  return it == by_ino_.end() ? nullptr : it->second;
}

namespace {

// A folder: nlink is 2 and one for each folder in it (each one's ".."), as find(1) expects.
struct stat directory_attributes(std::time_t mtime, fuse_ino_t ino = FUSE_ROOT_ID, std::size_t folders = 0) {
  struct stat st {};
  st.st_ino = ino;
  st.st_mode = S_IFDIR | 0555;
  st.st_nlink = static_cast<nlink_t>(2 + folders);
  st.st_mtime = st.st_ctime = st.st_atime = mtime;
  return st;
}

// The slice of a directory listing that one readdir asks for.
void reply_slice(fuse_req_t req, const std::vector<char>& listing, off_t offset, std::size_t size) {
  if (offset < 0 || static_cast<std::size_t>(offset) >= listing.size()) {
    fuse_reply_buf(req, nullptr, 0);
    return;
  }
  fuse_reply_buf(req, listing.data() + offset, std::min(size, listing.size() - static_cast<std::size_t>(offset)));
}

bool is_live(const proto::CatalogEntry& e) { return (e.flags & proto::kEntryLive) != 0; }

void add_entry(fuse_req_t req, std::vector<char>& listing, const char* name, const struct stat& st) {
  const std::size_t at = listing.size();
  const std::size_t n = fuse_add_direntry(req, nullptr, 0, name, nullptr, 0);
  listing.resize(at + n);
  fuse_add_direntry(req, listing.data() + at, n, name, &st, static_cast<off_t>(at + n));  // the offset of the entry after it
}

}  // namespace

struct stat VodFs::attributes(const proto::CatalogEntry& e, std::time_t mtime, fuse_ino_t ino) const {
  struct stat st {};
  st.st_ino = ino;
  st.st_mode = S_IFREG | 0444;
  st.st_nlink = 1;
  st.st_size = static_cast<off_t>(e.size);
  st.st_blksize = 256 * 1024;
  st.st_blocks = static_cast<blkcnt_t>((e.size + 511) / 512);
  st.st_mtime = st.st_ctime = st.st_atime = mtime;
  return st;
}

const proto::CatalogEntry* VodFs::find(fuse_ino_t ino, const CatalogSnapshot& snapshot) const {
  const std::string* name = inodes_.name_of(ino);
  if (!name || name->ends_with('/')) return nullptr;
  const auto at = snapshot.tree->entry(*name);
  if (!at || is_live(snapshot.catalog.entries[*at])) return nullptr;  // live channels are not files (docs/mount.md)
  return &snapshot.catalog.entries[*at];
}

std::optional<std::string> VodFs::folder_of(fuse_ino_t ino, const CatalogSnapshot& snapshot) const {
  if (ino == FUSE_ROOT_ID) return std::string();
  const std::string* name = inodes_.name_of(ino);
  if (!name || !name->ends_with('/')) return std::nullopt;
  std::string path = name->substr(0, name->size() - 1);
  if (!snapshot.tree->folder(path)) return std::nullopt;  // gone with a rescan
  return path;
}

void VodFs::init(void* userdata, fuse_conn_info* conn) {
  auto& fs = *static_cast<VodFs*>(userdata);
  if (fs.settings_.page_cache) conn->max_readahead = std::min(conn->max_readahead, fs.settings_.max_readahead);
  conn->want &= ~FUSE_CAP_ATOMIC_O_TRUNC;
}

void VodFs::lookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  VodFs& fs = self(req);
  fuse_entry_param e{};
  e.attr_timeout = e.entry_timeout = fs.settings_.attr_seconds;
  const auto snapshot = fs.catalog_.get();
  const auto folder = fs.folder_of(parent, *snapshot);
  if (!folder) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  const std::string path = folder->empty() ? std::string(name) : *folder + "/" + name;
  if (const auto at = snapshot->tree->entry(path); at && !is_live(snapshot->catalog.entries[*at])) {
    e.ino = fs.inodes_.ino_of(path);
    e.attr = fs.attributes(snapshot->catalog.entries[*at], snapshot->seen, e.ino);
  } else if (snapshot->tree->folder(path)) {
    e.ino = fs.inodes_.ino_of(path + "/");
    e.attr = directory_attributes(snapshot->seen, e.ino, snapshot->tree->folder(path)->folders.size());
  }
  fuse_reply_entry(req, &e);  // ino 0: no such name, and the kernel may trust that for the timeout
}

void VodFs::getattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  VodFs& fs = self(req);
  const auto snapshot = fs.catalog_.get();
  if (const auto folder = fs.folder_of(ino, *snapshot)) {
    const struct stat st = directory_attributes(snapshot->seen, ino, snapshot->tree->folder(*folder)->folders.size());
    fuse_reply_attr(req, &st, fs.settings_.attr_seconds);
    return;
  }
  const auto* e = fs.find(ino, *snapshot);
  if (!e) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  const struct stat st = fs.attributes(*e, snapshot->seen, ino);
  fuse_reply_attr(req, &st, fs.settings_.attr_seconds);
}

void VodFs::readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info*) {
  VodFs& fs = self(req);
  const auto snapshot = fs.catalog_.get();
  const auto folder = fs.folder_of(ino, *snapshot);
  if (!folder) {
    const std::string* name = fs.inodes_.name_of(ino);
    fuse_reply_err(req, name && !name->ends_with('/') ? ENOTDIR : ENOENT);  // a movie, or a folder gone
    return;
  }
  const std::string prefix = folder->empty() ? "" : *folder + "/";
  std::vector<char> listing;
  const auto* f = snapshot->tree->folder(*folder);
  const std::string parent(client::folder_of(*folder));
  const fuse_ino_t parent_ino = folder->empty() || parent.empty() ? FUSE_ROOT_ID : fs.inodes_.ino_of(parent + "/");
  add_entry(req, listing, ".", directory_attributes(snapshot->seen, ino, f->folders.size()));
  add_entry(req, listing, "..", directory_attributes(snapshot->seen, parent_ino));
  for (const auto& [sub, count] : f->folders)
    add_entry(
        req, listing, sub.c_str(),
        directory_attributes(snapshot->seen, fs.inodes_.ino_of(prefix + sub + "/"), snapshot->tree->folder(prefix + sub)->folders.size()));
  for (std::size_t i : f->entries) {
    const auto& e = snapshot->catalog.entries[i];
    if (is_live(e)) continue;
    add_entry(req, listing, std::string(client::leaf_of(e.name)).c_str(), fs.attributes(e, snapshot->seen, fs.inodes_.ino_of(e.name)));
  }
  reply_slice(req, listing, offset, size);
}

void VodFs::open(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  VodFs& fs = self(req);
  const auto snapshot = fs.catalog_.get();
  if (fs.folder_of(ino, *snapshot)) {
    fuse_reply_err(req, EISDIR);
    return;
  }
  const auto* e = fs.find(ino, *snapshot);
  if (!e) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
    fuse_reply_err(req, EROFS);
    return;
  }
  fi->direct_io = fs.settings_.page_cache ? 0 : 1;
  if (fs.settings_.page_cache) {
    std::lock_guard lock(fs.opened_mutex_);
    auto [it, first] = fs.opened_.try_emplace(ino, e->size, snapshot->seen);
    const bool same = !first && it->second == std::make_pair(e->size, snapshot->seen);
    it->second = {e->size, snapshot->seen};
    fi->keep_cache = same ? 1 : 0;  // a rescan that replaced the movie drops its cached pages
  }
  fuse_reply_open(req, fi);
}

void VodFs::read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t offset, fuse_file_info*) {
  VodFs& fs = self(req);
  if (offset < 0) {
    fuse_reply_err(req, EINVAL);
    return;
  }
  const auto snapshot = fs.catalog_.get();
  const auto* e = fs.find(ino, *snapshot);
  if (!e) {
    fuse_reply_err(req, ENOENT);
    return;
  }
  if (static_cast<std::uint64_t>(offset) >= e->size) {
    fuse_reply_buf(req, nullptr, 0);
    return;
  }
  const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(size, e->size - static_cast<std::uint64_t>(offset)));
  fs.pool_.read(e->name, static_cast<std::uint64_t>(offset), want, [req, name = e->name, offset](const ReadReply& r) {
    if (r.error != 0) {
      log::error("mount", "read of '" + name + "' at " + std::to_string(offset) + " failed (" + std::strerror(r.error) + "): " + r.message);
      fuse_reply_err(req, r.error);
      return;
    }
    // Written to the kernel from where the Reads landed: fuse_reply_iov is one writev.
    std::vector<iovec> iov;
    for (const auto& p : r.pieces) iov.push_back({const_cast<std::uint8_t*>(p.data()), p.size()});
    fuse_reply_iov(req, iov.data(), static_cast<int>(iov.size()));
  });
}

void VodFs::statfs(fuse_req_t req, fuse_ino_t) {
  VodFs& fs = self(req);
  struct statvfs st {};
  const auto snapshot = fs.catalog_.get();
  std::uint64_t bytes = 0;
  for (const auto& e : snapshot->catalog.entries) bytes += e.size;
  st.f_bsize = st.f_frsize = 4096;
  st.f_blocks = (bytes + 4095) / 4096;
  st.f_files = snapshot->catalog.entries.size();
  st.f_namemax = proto::kNameComponentMax;  // of one folder or file name
  st.f_flag = ST_RDONLY | ST_NOSUID;
  fuse_reply_statfs(req, &st);
}

fuse_lowlevel_ops VodFs::operations() {
  fuse_lowlevel_ops ops{};
  ops.init = &VodFs::init;
  ops.lookup = &VodFs::lookup;
  ops.getattr = &VodFs::getattr;
  ops.readdir = &VodFs::readdir;
  ops.open = &VodFs::open;
  ops.read = &VodFs::read;
  ops.statfs = &VodFs::statfs;
  return ops;
}

}  // namespace vod::mount
