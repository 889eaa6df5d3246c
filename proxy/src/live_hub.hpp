// SPDX-License-Identifier: LGPL-2.1-or-later
// Live channels fanned out: one server session per channel, shared by every HTTP viewer of it.
//
//   LiveHubs     the proxy's registry, channel name -> LiveHub. The first viewer of a channel
//                opens its hub (a blocking connect, like a movie session); the hub closes
//                kLiveLinger after its last viewer leaves, so a player that reconnects at once
//                finds it still open.
//   LiveHub      one channel: its LiveRelay (the LiveSession, or the multicast session with
//                --transport udp) read as fast as the server publishes, whatever the viewers do;
//                a LiveChunker that cuts the bytes at keyframes; a LiveBacklog of the recent
//                chunks (--live-buffer-kib).
//   LiveViewer   one HTTP response's subscription: its ViewerCursor in the backlog. next() hands
//                over the chunk to send, or waits for the next one. A viewer that fell out of the
//                backlog jumps to the newest keyframe: logged at info with the bytes skipped, and
//                counted in /metrics.
//
// A server that gives up on the session (reconnects exhausted) ends every viewer's response, and
// the next viewer opens a new hub. Everything runs on the io thread.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <algorithm>
#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "live_backlog.hpp"
#include "live_chunker.hpp"
#include "live_relay.hpp"
#include "proxy_metrics.hpp"
#include "rdma_pool.hpp"

namespace vod::proxy {

inline constexpr std::chrono::seconds kLiveLinger{2};

// The kernel send buffer of a live response: an eighth of the channel's backlog, 64 KiB..1 MiB. A
// bounded fraction, so that a slow viewer's lag shows in the backlog, where it is cut at a
// keyframe, rather than in megabytes of stale video queued in the socket (autotuning allows 4 MiB).
inline std::size_t live_send_buffer_for(std::size_t backlog_bytes) {
  return std::clamp<std::size_t>(backlog_bytes / 8, std::size_t{64} << 10, std::size_t{1} << 20);
}

struct LiveHubSettings {
  std::size_t backlog_bytes = 0;  // --live-buffer-kib
  std::size_t read_bytes = 0;     // the most one read of the session delivers (--chunk-kib)
  std::chrono::milliseconds linger = kLiveLinger;
};

class LiveHub;

class LiveViewer {
 public:
  // The chunk to send (step.chunk), or why the channel ended (error; the step is empty).
  using Ready = std::function<void(const BacklogStep& step, const std::string& error)>;

  LiveViewer(std::shared_ptr<LiveHub> hub, std::string peer);
  ~LiveViewer();  // leaves the hub
  LiveViewer(const LiveViewer&) = delete;
  LiveViewer& operator=(const LiveViewer&) = delete;

  // `ready` runs once, later, on the io thread: at once when the backlog holds the next chunk,
  // else when the session brings one.
  void next(Ready ready);

 private:
  friend class LiveHub;
  void offer();  // the hub appended chunks, or failed

  std::shared_ptr<LiveHub> hub_;
  std::string peer_;
  ViewerCursor cursor_;
  Ready waiting_;
};

class LiveHub : public std::enable_shared_from_this<LiveHub> {
 public:
  // `relay` is connected. `closed` runs once when the hub closes (the registry forgets it).
  LiveHub(boost::asio::io_context& io, std::string channel, std::shared_ptr<LiveRelay> relay, const LiveHubSettings& settings,
          ProxyMetrics& metrics, std::function<void(LiveHub*)> closed);
  ~LiveHub();
  LiveHub(const LiveHub&) = delete;
  LiveHub& operator=(const LiveHub&) = delete;

  void start();  // begins reading the session
  // Ends the session. `failure` (the session gave up) ends the viewers' responses with `why` and
  // is logged at warn; an ordinary close (no viewers left, the proxy stopping) at info.
  void close(const std::string& why, bool failure);
  // The registry goes away first (the proxy stops): forget it, and let viewers leave quietly.
  void detach() noexcept {
    closed_callback_ = nullptr;
    detached_ = true;
  }

  const std::string& channel() const noexcept { return channel_; }
  const LiveBacklog& backlog() const noexcept { return backlog_; }
  const std::string& end_reason() const noexcept { return end_reason_; }  // empty while open
  std::size_t viewers() const noexcept { return viewers_.size(); }

 private:
  friend class LiveViewer;
  void join(LiveViewer* viewer);
  void leave(LiveViewer* viewer);
  void read();
  void on_read(const client::LiveChunk& chunk, const std::string& error);

  boost::asio::io_context& io_;
  std::string channel_;
  std::shared_ptr<LiveRelay> relay_;
  LiveHubSettings settings_;
  ProxyMetrics& metrics_;
  std::function<void(LiveHub*)> closed_callback_;
  std::vector<std::uint8_t> read_buffer_;
  LiveChunker chunker_;
  LiveBacklog backlog_;
  std::set<LiveViewer*> viewers_;
  boost::asio::steady_timer linger_;
  std::string end_reason_;
  bool closed_ = false, detached_ = false;
  std::uint64_t bytes_read_ = 0, skips_ = 0, viewers_served_ = 0;
};

class LiveHubs {
 public:
  LiveHubs(RdmaPool& pool, ProxyMetrics& metrics, LiveHubSettings settings);
  ~LiveHubs();  // closes every hub
  LiveHubs(const LiveHubs&) = delete;
  LiveHubs& operator=(const LiveHubs&) = delete;

  // A viewer of `channel` (a catalog name): joins its hub, or opens one. The channel's session is
  // opened off the event loop (a worker of the pool's SessionOpener); viewers that ask meanwhile
  // wait for the same open. `done` runs later on the io thread with the viewer, or with null and
  // the reason the session could not be opened.
  using Subscribed = std::function<void(std::unique_ptr<LiveViewer> viewer, const std::string& error)>;
  void subscribe(const std::string& channel, const std::string& peer, Subscribed done);
  std::size_t channels() const noexcept { return hubs_.size(); }

 private:
  void opened(const std::string& channel, std::unique_ptr<client::LiveSource> source, const std::string& error);

  RdmaPool& pool_;
  ProxyMetrics& metrics_;
  LiveHubSettings settings_;
  std::map<std::string, std::shared_ptr<LiveHub>> hubs_;
  struct Waiter {
    std::string peer;
    Subscribed done;
  };
  std::map<std::string, std::vector<Waiter>> opening_;          // channels whose session a worker is opening
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // false once gone: late opens are dropped
};

}  // namespace vod::proxy
