// SPDX-License-Identifier: LGPL-2.1-or-later
// A flag another thread can raise to wake a blocked reader: an eventfd, so that the reader's poll()
// on its completion and CM channels wakes too.
//
// The eventfd is made the first time a reader asks for it (fd()), not with the session: an open
// makes no system call it does not need before its connect and first Read, and a reader whose
// bytes land before it ever waits never needs the fd. A raise() before the fd exists is carried
// over to it when it is made, so a poll() on it still wakes.
#pragma once

#include <atomic>
#include <mutex>

namespace vod::client {

class Interrupter {
 public:
  Interrupter() = default;
  ~Interrupter();
  Interrupter(const Interrupter&) = delete;
  Interrupter& operator=(const Interrupter&) = delete;

  void raise() noexcept;  // thread-safe
  void clear() noexcept;  // thread-safe
  bool raised() const noexcept { return raised_.load(std::memory_order_acquire); }
  // The fd to poll for POLLIN, readable while raised; made on first use. Throws std::runtime_error
  // when eventfd() fails.
  int fd() const;

 private:
  mutable std::mutex lock_;  // guards fd_ and orders raise()/clear() against making it
  mutable int fd_ = -1;
  std::atomic<bool> raised_{false};
};

}  // namespace vod::client
