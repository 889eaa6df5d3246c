// SPDX-License-Identifier: LGPL-2.1-or-later
// The HTTP listener of vod-server's /metrics (--metrics-port; off by default, 127.0.0.1 when on), on a
// thread of its own with a Boost.Beast asynchronous server, so that a slow or hostile scraper never
// touches the event loop. GET or HEAD /metrics answers with render(); any other path is 404, any
// other method 405. Requests are bounded (4 KiB of headers, no body) and time out after 10 s, and at
// most 16 connections are served at once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace vod::server {

class MetricsEndpoint {
 public:
  // Binds at once (throws std::runtime_error naming the address on failure) and serves until destroyed.
  MetricsEndpoint(const std::string& address, std::uint16_t port, std::function<std::string()> render);
  ~MetricsEndpoint();
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  std::uint16_t port() const noexcept { return port_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  std::uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace vod::server
