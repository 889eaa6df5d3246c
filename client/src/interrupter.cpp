#include "vod/client/interrupter.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vod::client {

Interrupter::Interrupter() : fd_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  if (fd_ < 0) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
}

Interrupter::~Interrupter() { close(fd_); }

void Interrupter::raise() noexcept {
  raised_.store(true, std::memory_order_release);
  const std::uint64_t one = 1;
  (void)!write(fd_, &one, sizeof one);
}

void Interrupter::clear() noexcept {
  raised_.store(false, std::memory_order_release);
  std::uint64_t drained;
  (void)!read(fd_, &drained, sizeof drained);
}

}  // namespace vod::client
