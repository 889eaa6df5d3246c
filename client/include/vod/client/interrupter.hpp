// A flag another thread can raise to wake a blocked reader: an eventfd, so that the reader's poll()
// on its completion and CM channels wakes too.
#pragma once

#include <atomic>

namespace vod::client {

class Interrupter {
 public:
  Interrupter();
  ~Interrupter();
  Interrupter(const Interrupter&) = delete;
  Interrupter& operator=(const Interrupter&) = delete;

  void raise() noexcept;  // thread-safe
  void clear() noexcept;  // thread-safe
  bool raised() const noexcept { return raised_.load(std::memory_order_acquire); }
  int fd() const noexcept { return fd_; }

 private:
  int fd_;
  std::atomic<bool> raised_{false};
};

}  // namespace vod::client
