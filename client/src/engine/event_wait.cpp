// SPDX-License-Identifier: LGPL-2.1-or-later
#include "engine/event_wait.hpp"

#include <poll.h>

#include <algorithm>
#include <vector>

#include "vod/client/errors.hpp"

namespace vod::client::engine {

EventsReady poll_events(std::span<const int> completion_fds, int control_fd, const Interrupter* interrupter, int ms) {
  std::vector<pollfd> fds;
  for (int fd : completion_fds) fds.push_back({fd, POLLIN, 0});
  fds.push_back({control_fd, POLLIN, 0});
  fds.push_back({interrupter ? interrupter->fd() : -1, POLLIN, 0});
  const int n = poll(fds.data(), fds.size(), ms);
  if (interrupter && interrupter->raised()) throw Interrupted();
  EventsReady ready;
  if (n <= 0) return ready;
  ready.any = true;
  for (std::size_t i = 0; i < completion_fds.size(); ++i) ready.completions = ready.completions || (fds[i].revents & POLLIN);
  ready.control = fds[completion_fds.size()].revents & POLLIN;
  return ready;
}

bool wait_for_events(Fetcher& fetcher, const Interrupter* interrupter, std::chrono::milliseconds wait) {
  if (!fetcher.armed()) {
    fetcher.arm();
    return true;  // completions may have arrived before arming: the caller polls again first
  }
  int ms = static_cast<int>(wait.count());
  if (const int timer = fetcher.next_timeout_ms(); timer >= 0) ms = std::min(ms, timer);
  const std::vector<int> completion_fds = fetcher.wait_fds();
  const EventsReady ready = poll_events(completion_fds, fetcher.control_fd(), interrupter, ms);
  if (!ready.any) return false;
  if (ready.completions) fetcher.consume();
  if (ready.control) fetcher.check_events();
  return true;
}

}  // namespace vod::client::engine
