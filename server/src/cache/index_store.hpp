// SPDX-License-Identifier: LGPL-2.1-or-later
// What the server derives from a file and keeps across restarts, in its state directory
// (--state-dir): the keyframe indexes of cached movies, one file each under DIR/indexes/, and their
// content identities under DIR/digests/, each named by the movie file's path, size, mtime and inode.
// A file that changed gets a new name, so a stale index or digest is never found; saving one removes
// the others of that path.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"

namespace vod::server::cache {

// One version of a file, as the server listed it: what indexes and digests are kept under, and what
// every later read checks the file against.
struct FileIdentity {
  std::string path;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  ino_t inode = 0;

  // The version that `st` (a stat of `path`) describes.
  static FileIdentity of(std::string path, const struct stat& st);
  // Whether `st` still describes this version: the same inode, size and mtime.
  bool same_version(const struct stat& st) const noexcept;
};

class IndexStore {
 public:
  // Creates DIR/indexes if need be. An empty dir, or one that cannot be made, keeps nothing (the
  // reason is logged once).
  explicit IndexStore(const std::string& dir);
  bool enabled() const noexcept { return !dir_.empty(); }
  // The index kept for exactly this file, or nullopt (none, unreadable, or not its movie's size).
  std::optional<proto::KeyframeIndex> load(const FileIdentity& f) const;
  // Keeps `index` for this file (write, fsync-free rename), dropping older ones of its path. Errors
  // are logged, not thrown: the index is still served from memory.
  void save(const FileIdentity& f, const proto::KeyframeIndex& index) const;
  // The content identity kept for exactly this file, or unknown; keeping one, as save() does.
  proto::ContentId load_digest(const FileIdentity& f) const;
  void save_digest(const FileIdentity& f, const proto::ContentId& id) const;

 private:
  void keep(const std::string& dir, const FileIdentity& f, const char* suffix, const std::vector<std::uint8_t>& bytes,
            const char* what) const;
  std::string dir_;      // DIR/indexes, or empty
  std::string digests_;  // DIR/digests, or empty
};

}  // namespace vod::server::cache
