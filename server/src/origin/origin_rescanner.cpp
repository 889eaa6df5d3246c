// SPDX-License-Identifier: LGPL-2.1-or-later
#include "origin/origin_rescanner.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace vod::server::origin {

OriginRescanner::OriginRescanner(loop::Reactor& reactor, Done done) : reactor_(reactor), done_(std::move(done)) {
  event_ = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!event_) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  events_ = reactor_.add(event_.get(), [this] { finished(); });
}

OriginRescanner::~OriginRescanner() {
  if (thread_.joinable()) thread_.join();
}

bool OriginRescanner::start(std::function<Library()> scan) {
  if (busy()) return false;
  thread_ = std::thread([this, scan = std::move(scan)] {
    std::optional<Library> library;
    std::string error;
    try {
      library = scan();
    } catch (const std::exception& e) {
      error = e.what();
    }
    {
      std::lock_guard lock(mutex_);
      result_ = std::move(library);
      error_ = std::move(error);
    }
    const std::uint64_t one = 1;
    (void)!write(event_.get(), &one, sizeof one);
  });
  return true;
}

void OriginRescanner::finished() {
  std::uint64_t ignored;
  (void)!read(event_.get(), &ignored, sizeof ignored);
  if (thread_.joinable()) thread_.join();  // it has written its result: it ends now
  std::optional<Library> library;
  std::string error;
  {
    std::lock_guard lock(mutex_);
    library = std::move(result_);
    result_.reset();
    error = std::move(error_);
  }
  done_(std::move(library), error);
}

}  // namespace vod::server::origin
