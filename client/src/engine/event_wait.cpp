// SPDX-License-Identifier: LGPL-2.1-or-later
#include "engine/event_wait.hpp"

#include <poll.h>

#include <algorithm>
#include <vector>

#include "vod/client/errors.hpp"

namespace vod::client::engine {

bool wait_for_events(Fetcher& fetcher, const Interrupter* interrupter, std::chrono::milliseconds wait) {
  if (!fetcher.armed()) {
    fetcher.arm();
    return true;  // completions may have arrived before arming: the caller polls again first
  }
  std::vector<pollfd> fds;
  for (int fd : fetcher.wait_fds()) fds.push_back({fd, POLLIN, 0});
  const std::size_t completion_fds = fds.size();
  fds.push_back({fetcher.control_fd(), POLLIN, 0});
  fds.push_back({interrupter ? interrupter->fd() : -1, POLLIN, 0});
  int ms = static_cast<int>(wait.count());
  if (const int timer = fetcher.next_timeout_ms(); timer >= 0) ms = std::min(ms, timer);
  const int n = poll(fds.data(), fds.size(), ms);
  if (interrupter && interrupter->raised()) throw Interrupted();
  if (n <= 0) return false;
  for (std::size_t i = 0; i < completion_fds; ++i)
    if (fds[i].revents & POLLIN) fetcher.consume();
  if (fds[completion_fds].revents & POLLIN) fetcher.check_events();
  return true;
}

}  // namespace vod::client::engine
