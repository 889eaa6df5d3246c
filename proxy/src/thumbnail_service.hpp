// SPDX-License-Identifier: LGPL-2.1-or-later
// The pictures of vod-proxy's pages, made lazily and off the I/O thread: one worker thread with a
// libvodclient Session of its own (so a thumbnail never queues in front of a player's Reads)
// decodes the keyframe a picture asks for (media::make_thumbnail) and hands the JPEG back to the
// io_context. Movie pictures are cached per catalog generation; a live channel's current picture
// for a few seconds. A movie whose picture cannot be decoded gets the placeholder (cached too); a
// server that cannot be reached gets it uncached, so the next request tries again.
//
// Work is bounded by the catalog: requests for the same picture wait on one job, and there are at
// most 1 + kStripFrames pictures per entry and generation.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "proxy_metrics.hpp"
#include "request_router.hpp"
#include "vod/client/live_session.hpp"
#include "vod/client/multicast_live_session.hpp"
#include "vod/client/session.hpp"
#include "vod/media/thumbnail.hpp"

namespace vod::proxy {

struct Picture {
  std::string jpeg;
  bool placeholder = false;
  std::string note;  // why the placeholder, for the X-Thumbnail header and the log
};

struct ThumbnailSettings {
  client::Uri server;
  client::SessionOptions session;
  client::LiveOptions live;
  std::optional<client::MulticastLiveOptions> multicast;  // --transport udp with --udp-group
  media::ThumbnailOptions picture;
  std::chrono::seconds live_max_age{5};
  std::size_t live_bytes = 4u << 20;          // read at most this much of a channel for its picture
  std::chrono::milliseconds live_wait{6000};  // and for at most this long
};

class ThumbnailService {
 public:
  using Done = std::function<void(std::shared_ptr<const Picture>)>;

  ThumbnailService(boost::asio::io_context& io, ThumbnailSettings settings);
  ~ThumbnailService();  // stops the worker (a job in progress finishes first)
  ThumbnailService(const ThumbnailService&) = delete;
  ThumbnailService& operator=(const ThumbnailService&) = delete;

  // On the io thread: `done` runs on the io thread, at once from the cache or when the job ends.
  void get(const ThumbnailWant& want, std::uint32_t generation, Done done);
  ThumbnailFigures figures() const noexcept { return figures_; }

 private:
  struct Key {
    ThumbnailWant want;
    std::uint32_t generation = 0;
    bool operator<(const Key& o) const { return std::tie(want, generation) < std::tie(o.want, o.generation); }
  };
  struct Cached {
    std::shared_ptr<const Picture> picture;
    std::chrono::steady_clock::time_point made;
  };
  struct Outcome {
    Picture picture;
    bool cacheable = true;
  };

  void work();                   // the worker thread
  Outcome make(const Key& key);  // worker thread only
  Outcome make_movie(const Key& key);
  Outcome make_live(const Key& key);
  Outcome placeholder(std::string note, bool cacheable);
  void finish(const Key& key, Outcome outcome);  // io thread

  boost::asio::io_context& io_;
  ThumbnailSettings settings_;
  // io thread only
  std::map<Key, Cached> cache_;
  std::map<Key, std::vector<Done>> waiting_;
  ThumbnailFigures figures_;
  // shared with the worker
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Key> queue_;
  bool stopping_ = false;
  // worker only
  std::unique_ptr<client::Session> session_;
  std::string placeholder_jpeg_;
  std::thread worker_;  // last: starts after everything above exists
};

}  // namespace vod::proxy
