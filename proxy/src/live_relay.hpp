// SPDX-License-Identifier: LGPL-2.1-or-later
// The proxy's one session of a live channel (LiveHub owns it): a client::LiveSource, a LiveSession
// (RDMA) or a MulticastLiveSession (UDP multicast, with --transport udp), driven from the proxy's
// io_context. It
// waits (asio) on the session's fds, with a short timer for what has no fd (header polling,
// reconnect backoff, a multicast hole timeout), and hands the next bytes over when there are some.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vod/client/live_session.hpp"
#include "vod/client/live_source.hpp"
#include "vod/client/multicast_live_session.hpp"

namespace vod::proxy {

class LiveRelay : public std::enable_shared_from_this<LiveRelay> {
 public:
  // What read() delivered into the destination (chunk.bytes is never 0 unless `error` says why
  // the stream ended), with its discontinuity flag.
  using Done = std::function<void(const client::LiveChunk& chunk, const std::string& error)>;

  // Drives `source`, opened already (SessionOpener::open_live, off the event loop). `idle_look`:
  // how often to look without an fd saying so (200 ms over RDMA: header polling; 50 ms by
  // multicast: hole timeouts).
  LiveRelay(boost::asio::io_context& io, std::unique_ptr<client::LiveSource> source, std::chrono::milliseconds idle_look);
  ~LiveRelay();

  // `done` runs on the io thread once some bytes are in `dest`.
  void next(std::span<std::uint8_t> dest, Done done);
  void close() noexcept;
  std::string summary() const { return source_->summary(); }

 private:
  void attempt();
  void watch();

  boost::asio::io_context& io_;
  std::unique_ptr<client::LiveSource> source_;
  // How often to look without an fd saying so: header polling and backoffs (RDMA), hole timeouts
  // (multicast).
  std::chrono::milliseconds idle_look_;
  std::vector<std::unique_ptr<boost::asio::posix::stream_descriptor>> watches_;
  boost::asio::steady_timer timer_;
  std::span<std::uint8_t> dest_;
  Done done_;
  bool closed_ = false;
};

}  // namespace vod::proxy
