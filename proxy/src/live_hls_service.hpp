// SPDX-License-Identifier: LGPL-2.1-or-later
// Live channels as LL-HLS (/hls/live/NAME/...): per channel one LiveHlsChannel, a viewer of the
// channel's LiveHub (so the channel's one server session is shared with its MPEG-TS viewers too)
// that feeds a LiveHlsPackager, and answers playlist, segment and part requests from it.
//
//   - A plain playlist request is answered once the window's complete segments last three target
//     durations (at most first_wait() after the channel opens, else 503 with Retry-After): a
//     player without LL-HLS starts that far behind the end, and Chromium's own HLS, given less,
//     never starts. A blocking reload is answered from the first part on.
//   - A blocking reload (_HLS_msn, _HLS_part; rfc8216bis 6.2.5.2) waits until the playlist holds
//     that part, or that segment complete; at most three target durations, then 503. A request
//     for a segment more than two past the newest is refused at once (400), as the draft asks.
//   - The part named by the playlist's EXT-X-PRELOAD-HINT, and a segment still being made, are
//     answered when they are finished: a player asks for them ahead of time.
//   - A channel that no request touched for --hls-live-idle seconds closes: it leaves its hub
//     (which closes after its own linger when no MPEG-TS viewer is left either).
// Everything runs on the io thread; the number of channels is bounded by the catalog's live
// channels, the waiting requests by the proxy's connections.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>

#include "live_hls_packager.hpp"
#include "live_hub.hpp"

namespace vod::proxy {

struct LiveHlsServiceSettings {
  LiveHlsSettings packaging;
  std::chrono::seconds idle{30};
};

class LiveHlsChannel;

class LiveHlsService {
 public:
  using Done = std::function<void(LiveHlsReply)>;

  LiveHlsService(boost::asio::io_context& io, LiveHubs& hubs, LiveHlsServiceSettings settings);
  ~LiveHlsService();
  LiveHlsService(const LiveHlsService&) = delete;
  LiveHlsService& operator=(const LiveHlsService&) = delete;

  // `done` runs later, once, on the io thread.
  void request(const LiveHlsWant& want, const std::string& peer, Done done);
  std::size_t channels() const noexcept { return channels_.size(); }

 private:
  friend class LiveHlsChannel;
  void forget(LiveHlsChannel* channel, std::uint64_t next_msn);

  boost::asio::io_context& io_;
  LiveHubs& hubs_;
  LiveHlsServiceSettings settings_;
  std::map<std::string, std::shared_ptr<LiveHlsChannel>> channels_;
  // Per channel name (bounded by the catalog's channels), the number after the last segment of its
  // last packaging: a new packaging starts past it, so its URIs never name other bytes.
  std::map<std::string, std::uint64_t> next_msn_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

class LiveHlsChannel : public std::enable_shared_from_this<LiveHlsChannel> {
 public:
  // Segments are numbered from `first_msn` on.
  LiveHlsChannel(boost::asio::io_context& io, LiveHlsService& service, std::string name, const LiveHlsServiceSettings& settings,
                 std::uint64_t first_msn);
  ~LiveHlsChannel();

  void open(LiveHubs& hubs, const std::string& peer);
  void serve(const LiveHlsWant& want, LiveHlsService::Done done);
  // Why a channel's packaging ends: the session failed (logged at warn), no request came for
  // --hls-live-idle, or the proxy stops (its io thread is gone: what waits is dropped, not answered).
  enum class Closing { failed, idle, proxy_stopping };
  // Leaves the hub; what waits gets a 503 saying `why`.
  void close(const std::string& why, Closing closing);

 private:
  struct Waiter {
    std::uint64_t id;  // what its timer's callback finds it by: the callback may run after the waiter was answered
    LiveHlsWant want;
    LiveHlsService::Done done;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };
  // The answer now, or nullopt while it is worth waiting for.
  std::optional<LiveHlsReply> answer(const LiveHlsWant& want) const;
  const std::string& playlist() const;  // the packager's, made once per chunk fed, however many requests wait for it
  void pull();
  void wake();
  void expire(std::uint64_t id);
  void touch();
  std::chrono::milliseconds first_wait() const;

  boost::asio::io_context& io_;
  LiveHlsService& service_;
  std::string name_;
  LiveHlsServiceSettings settings_;
  LiveHlsPackager packager_;
  mutable std::optional<std::string> playlist_;  // playlist(), until the next chunk
  std::unique_ptr<LiveViewer> viewer_;
  std::list<Waiter> waiting_;
  boost::asio::steady_timer idle_;
  std::string error_;  // set once the channel ended
  std::uint64_t requests_ = 0, next_waiter_ = 0;
};

}  // namespace vod::proxy
