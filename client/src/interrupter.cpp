// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/interrupter.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vod::client {

namespace {
void signal_fd(int fd) noexcept {
  const std::uint64_t one = 1;
  (void)!write(fd, &one, sizeof one);
}
}  // namespace

Interrupter::~Interrupter() {
  if (fd_ >= 0) close(fd_);
}

int Interrupter::fd() const {
  std::lock_guard<std::mutex> guard(lock_);
  if (fd_ < 0) {
    fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno) + " (the interrupter of a blocking read)");
    if (raised()) signal_fd(fd_);  // raised before anyone waited: the first poll() wakes at once
  }
  return fd_;
}

void Interrupter::raise() noexcept {
  std::lock_guard<std::mutex> guard(lock_);
  raised_.store(true, std::memory_order_release);
  if (fd_ >= 0) signal_fd(fd_);
}

void Interrupter::clear() noexcept {
  std::lock_guard<std::mutex> guard(lock_);
  raised_.store(false, std::memory_order_release);
  if (fd_ < 0) return;
  std::uint64_t drained;
  (void)!read(fd_, &drained, sizeof drained);
}

}  // namespace vod::client
