// SPDX-License-Identifier: LGPL-2.1-or-later
// Listings of the origin after start, on a thread of their own: a listing is HTTP (a folder per
// request, a probe per new object), and an origin that is slow or down must not hold the event
// loop, which serves the Write-Record senders, the live channels and every segment answer. One
// listing at a time; its Library comes back to the loop through an eventfd.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "loop/reactor.hpp"
#include "movie_library.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::origin {

class OriginRescanner {
 public:
  // `done` runs on the loop with the new Library, or with the reason the listing failed.
  using Done = std::function<void(std::optional<Library> library, const std::string& error)>;
  OriginRescanner(loop::Reactor& reactor, Done done);
  ~OriginRescanner();  // waits for a listing under way (each request is bounded by --origin-timeout)
  OriginRescanner(const OriginRescanner&) = delete;
  OriginRescanner& operator=(const OriginRescanner&) = delete;

  bool busy() const noexcept { return thread_.joinable(); }
  // Runs `scan` on the thread (not while busy: false then).
  bool start(std::function<Library()> scan);

 private:
  void finished();
  loop::Reactor& reactor_;
  Done done_;
  UniqueFd event_;
  loop::Reactor::Registration events_;
  std::mutex mutex_;
  std::optional<Library> result_;
  std::string error_;
  std::thread thread_;
};

}  // namespace vod::server::origin
