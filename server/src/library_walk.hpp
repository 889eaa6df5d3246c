// SPDX-License-Identifier: LGPL-2.1-or-later
// Which files of a media directory are movies, and their names: the walk of the tree, without
// reading a byte of any file. docs/server.md, "The media directory".
#pragma once

#include <set>
#include <string>
#include <vector>

namespace vod::server {

struct LibraryFile {
  std::string name;  // the path below the media directory, '/' between folders: what clients ask for
  std::string path;  // where to open it (through the symlinks the walk followed)
  bool operator==(const LibraryFile&) const = default;
};

// The top-level names that are not movies or folders of movies: rdma://HOST/live/... and vod-proxy's
// /hls/... mean live channels and playlists there.
inline const std::set<std::string> kReservedRootNames = {"live", "hls"};

// Every regular, non-hidden file below `dir`, at any depth, sorted by name (as bytes). Skipped, each
// with a warning naming it and why: a name proto::invalid_name_reason refuses (not UTF-8, too
// long, a control character), a top-level file or folder named in kReservedRootNames or
// `reserved` (the live channels), a symlink whose target is outside `dir` or loops, a file that is
// neither regular nor a folder, a folder that cannot be listed. Hidden files and folders (a name
// starting with '.') are skipped silently. Throws only when `dir` itself cannot be listed.
std::vector<LibraryFile> walk_library(const std::string& dir, const std::set<std::string>& reserved);

}  // namespace vod::server
