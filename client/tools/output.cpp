// SPDX-License-Identifier: LGPL-2.1-or-later
#include "output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "vod/client/errors.hpp"
#include "vod/log.hpp"

namespace vod::client::cli {

namespace {
constexpr std::size_t kDirectAlign = 4096;  // offsets, lengths and addresses of an O_DIRECT write
}

bool write_all(int fd, const std::uint8_t* data, std::size_t n, const std::string& what) {
  for (std::size_t done = 0; done < n;) {
    const ssize_t w = ::write(fd, data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0 && errno == EPIPE) return false;
    if (w < 0) throw std::runtime_error("writing " + what + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(w);
  }
  return true;
}

OutputFile::OutputFile(const std::string& path, bool direct_io) : path_(path) {
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    return;
  }
  constexpr int kFlags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
  struct stat st {};
  const bool regular = ::stat(path.c_str(), &st) != 0 ? errno == ENOENT : S_ISREG(st.st_mode);  // not a FIFO or a device
  if (direct_io && regular) {
    fd_ = ::open(path.c_str(), kFlags | O_DIRECT, 0644);
    direct_ = fd_ >= 0;
    if (!direct_) log::debug("vod-client", path + ": no O_DIRECT here (" + std::strerror(errno) + "); writing through the page cache");
  }
  if (fd_ < 0) fd_ = ::open(path.c_str(), kFlags, 0644);
  if (fd_ < 0) throw ClientError(ErrorKind::usage, "cannot create " + path + ": " + std::strerror(errno));
}

OutputFile::~OutputFile() {
  if (fd_ > STDERR_FILENO) ::close(fd_);
}

void OutputFile::drop_direct_io() {
  const int flags = fcntl(fd_, F_GETFL);
  if (flags < 0 || fcntl(fd_, F_SETFL, flags & ~O_DIRECT) != 0)
    throw std::runtime_error("writing " + path_ + ": fcntl: " + std::strerror(errno));
  direct_ = false;
}

bool OutputFile::write(const std::uint8_t* data, std::size_t n) {
  if (direct_) {
    const bool aligned = reinterpret_cast<std::uintptr_t>(data) % kDirectAlign == 0 && n % kDirectAlign == 0;
    if (!aligned) {
      drop_direct_io();  // the last piece: the file's offset stays aligned up to here
    } else {
      const ssize_t w = ::write(fd_, data, n);
      if (w == static_cast<ssize_t>(n)) return true;
      if (w >= 0 || errno != EINVAL) {
        if (w < 0 && errno != EINTR) throw std::runtime_error("writing " + path_ + ": " + std::strerror(errno));
        drop_direct_io();  // a short or interrupted direct write: finish it through the cache
        return write_all(fd_, data + (w > 0 ? w : 0), n - static_cast<std::size_t>(w > 0 ? w : 0), path_);
      }
      log::debug("vod-client", path_ + ": the file system refused an O_DIRECT write (EINVAL); writing through the page cache");
      drop_direct_io();
    }
  }
  return write_all(fd_, data, n, path_);
}

void OutputFile::close() {
  if (fd_ <= STDERR_FILENO) return;
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw std::runtime_error("closing " + path_ + ": " + std::strerror(errno));
}

}  // namespace vod::client::cli
