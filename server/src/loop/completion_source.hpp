// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's one CompletionHub in its event loop: a CQ and a completion channel per device, made
// when the device is opened (add_device), so every channel's fd is in the loop before any QP uses
// it. When one is readable: consume its events, then poll until the hub is armed with nothing left
// (arm, then poll once more: a completion may have raced the arming). After each poll the
// after_poll hooks run: an owner that took note of its completions acts on them there.
#pragma once

#include <infiniband/verbs.h>

#include <functional>
#include <map>
#include <vector>

#include "loop/reactor.hpp"
#include "vod/rdma/completion_hub.hpp"

namespace vod::server::loop {

class CompletionSource {
 public:
  CompletionSource(Reactor& reactor, rdma::CompletionHub& hub) : reactor_(reactor), hub_(hub) {}
  CompletionSource(const CompletionSource&) = delete;
  CompletionSource& operator=(const CompletionSource&) = delete;

  rdma::CompletionHub& hub() noexcept { return hub_; }
  // Creates ctx's CQ and channel on the hub now, registers the channel's fd and arms the hub; once
  // per device.
  // Throws RdmaError (the device) or std::runtime_error (the loop).
  void add_device(ibv_context* ctx);
  void after_poll(std::function<void()> hook) { after_poll_.push_back(std::move(hook)); }
  // Polls until the hub is armed with nothing left, running the after_poll hooks after each poll.
  // Also for whoever just posted work that may complete before the hub was ever armed.
  void drain();

 private:
  Reactor& reactor_;
  rdma::CompletionHub& hub_;
  std::map<ibv_context*, Reactor::Registration> in_loop_;
  std::vector<std::function<void()>> after_poll_;
};

}  // namespace vod::server::loop
