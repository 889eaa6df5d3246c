// SPDX-License-Identifier: LGPL-2.1-or-later
// What the proxy's HLS playlists of a movie are made from, fetched once per movie and catalog
// generation off the I/O thread: the segments cut from its keyframe index (read by RDMA from the
// server, like every client reads it), the range of a TS file's leading tables (its first 64 KiB)
// and the codecs of its streams (its codec headers, with libavformat). One worker thread with a
// libvodclient Session of its own, so that this never queues in front of a player's Reads; requests
// for the same movie wait on one job. Bounded: at most one entry per movie of the catalog.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it
#include <boost/asio.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "hls_playlist.hpp"
#include "vod/client/session.hpp"

namespace vod::proxy {

struct HlsSettings {
  client::Uri server;
  client::SessionOptions session;
  std::uint64_t target_us = 4'000'000;  // --hls-segment-seconds
};

class HlsFacts {
 public:
  using Done = std::function<void(std::shared_ptr<const hls::MovieFacts>)>;

  HlsFacts(boost::asio::io_context& io, HlsSettings settings);
  ~HlsFacts();  // stops the worker (a job in progress finishes first)
  HlsFacts(const HlsFacts&) = delete;
  HlsFacts& operator=(const HlsFacts&) = delete;

  // On the io thread; `done` runs on the io thread, at once from the cache or when the job ends.
  void get(const std::string& name, std::uint32_t generation, Done done);
  std::uint64_t target_us() const noexcept { return settings_.target_us; }

 private:
  using Key = std::pair<std::string, std::uint32_t>;  // movie, catalog generation
  void work();
  hls::MovieFacts make(const Key& key);  // worker thread only
  void finish(const Key& key, hls::MovieFacts facts);

  boost::asio::io_context& io_;
  HlsSettings settings_;
  // io thread only
  std::map<Key, std::shared_ptr<const hls::MovieFacts>> cache_;
  std::map<Key, std::vector<Done>> waiting_;
  // shared with the worker
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Key> queue_;
  bool stopping_ = false;
  // worker only
  std::unique_ptr<client::Session> session_;
  std::thread worker_;  // last: starts after everything above exists
};

}  // namespace vod::proxy
