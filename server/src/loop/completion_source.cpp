// SPDX-License-Identifier: LGPL-2.1-or-later
#include "loop/completion_source.hpp"

#include <algorithm>

namespace vod::server::loop {

void CompletionSource::add_device(ibv_context* ctx) {
  if (in_loop_.count(ctx)) return;
  const auto before = hub_.fds();
  (void)hub_.reserve(ctx, 0);  // the CQ and its channel, with nothing reserved yet
  for (int fd : hub_.fds())
    if (std::find(before.begin(), before.end(), fd) == before.end())
      in_loop_.emplace(ctx, reactor_.add(fd, [this] {
        hub_.consume();
        drain();
      }));
  // Armed from the start: the first completion (a window bind) must wake the loop, whoever posted it.
  hub_.arm();
}

void CompletionSource::drain() {
  for (;;) {
    hub_.poll();
    for (const auto& hook : after_poll_) hook();
    if (hub_.armed()) break;
    hub_.arm();  // then poll once more: a completion may have landed before the arming
  }
}

}  // namespace vod::server::loop
