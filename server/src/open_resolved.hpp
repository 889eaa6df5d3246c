// SPDX-License-Identifier: LGPL-2.1-or-later
// Opening a movie's file where the library walk found it.
#pragma once

#include <string>

namespace vod::server {

// Opens `path`, a path without symlinks (the walk stores each file's canonical path), refusing one
// that a symlink now leads through (ELOOP): a folder of the media directory swapped for a link after
// the walk cannot make the server open a file outside it. openat2(2) with RESOLVE_NO_SYMLINKS
// (Linux 5.6); where the kernel or a seccomp filter has no openat2, O_NOFOLLOW guards the last part
// only. Returns the descriptor, or -1 with errno, as open(2).
int open_resolved(const std::string& path, int flags);

}  // namespace vod::server
