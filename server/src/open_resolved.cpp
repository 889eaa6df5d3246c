// SPDX-License-Identifier: LGPL-2.1-or-later
#include "open_resolved.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace vod::server {

int open_resolved(const std::string& path, int flags) {
  // glibc 2.36 has no openat2 wrapper: the system call itself.
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags);
  how.resolve = RESOLVE_NO_SYMLINKS;
  const long fd = ::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how);
  if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);
  return ::open(path.c_str(), flags | O_NOFOLLOW);
}

}  // namespace vod::server
