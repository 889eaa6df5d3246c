// SPDX-License-Identifier: LGPL-2.1-or-later
// Opens libvodclient sessions off vod-proxy's event loop. A session's open is a blocking rdma_cm
// connect and the Reads of its description, and a reconnect waits out its backoff: on the one asio
// thread that serves every HTTP client, one slow or absent vod-server froze them all, static pages
// included. Here a small pool of worker threads does the opening (and the retrying, with the
// session's ReconnectPolicy), and the result is posted back to the event loop, where the session is
// used from then on. A session is only ever used by one thread at a time: the worker until it posts
// it, the event loop after.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <atomic>
#include <boost/asio.hpp>
#include <functional>
#include <memory>
#include <string>

#include "vod/client/interrupter.hpp"
#include "vod/client/live_source.hpp"
#include "vod/client/open_live.hpp"
#include "vod/client/session.hpp"

namespace vod::proxy {

class SessionOpener {
 public:
  // The opened session, or null with the error that ended the attempts.
  using Done = std::function<void(std::unique_ptr<client::Session> session, const std::string& error, unsigned attempts)>;

  SessionOpener(boost::asio::io_context& io, unsigned threads);
  ~SessionOpener();  // stops waiting retries at once, and joins the workers
  SessionOpener(const SessionOpener&) = delete;
  SessionOpener& operator=(const SessionOpener&) = delete;

  // Opens `uri` on a worker; with `retry`, attempts that fail for a passing reason (nothing
  // answered, a refusal such as server full) are tried again on retry's schedule. `done` runs on
  // the event loop.
  void open(client::Uri uri, client::SessionOptions options, std::optional<client::ReconnectPolicy> retry, Done done);

  // Opens live channel `uri` on a worker (by multicast when `multicast` is given, else over RDMA);
  // `done` runs on the event loop with the source, or null and the error.
  using LiveDone = std::function<void(std::unique_ptr<client::LiveSource> source, const std::string& error)>;
  void open_live(client::Uri uri, client::LiveOptions rdma, std::optional<client::MulticastLiveOptions> multicast, LiveDone done);

  // Reads the catalog of `uri`'s server, or of every member of its fleet, merged (fleet.hpp), on a
  // worker; `done` runs on the event loop with it, or null and the error, and the session's figures.
  using CatalogDone =
      std::function<void(std::shared_ptr<const proto::Catalog> catalog, const std::string& error, const client::Stats& stats)>;
  void read_catalog(client::Uri uri, client::SessionOptions options, CatalogDone done);

 private:
  boost::asio::io_context& io_;
  client::Interrupter stop_;  // raised at destruction: a worker waiting out a backoff returns at once
  std::atomic<bool> stopping_{false};
  boost::asio::thread_pool workers_;  // last: joined first
};

}  // namespace vod::proxy
