// SPDX-License-Identifier: LGPL-2.1-or-later
// The proxy's RDMA side: one libvodclient Session per movie being watched, shared by every HTTP
// response for that movie, and the catalog (CatalogCache, re-read by a short catalog-only session). Sessions are
// opened (and reopened after their connection breaks) by worker threads (SessionOpener), so the
// io_context thread never waits on a connect or a backoff: while a session is opening, its reads
// wait in a queue, and the catalog last read stays in use. Everything else runs on the io_context
// thread: completions are noticed through asio waits on each session's completion channel and CM
// channel, so no thread polls.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "catalog_cache.hpp"
#include "proxy_metrics.hpp"
#include "session_opener.hpp"
#include "vod/client/live_session.hpp"
#include "vod/client/multicast_live_session.hpp"
#include "vod/client/session.hpp"

namespace vod::proxy {

class RdmaPool {
 public:
  // Completion of a read: bytes placed, or an error message (bytes 0).
  using Done = std::function<void(std::size_t bytes, const std::string& error)>;

  // `registered_blocks`: body blocks of registered memory at most (take_block()).
  RdmaPool(boost::asio::io_context& io, client::Uri server, client::SessionOptions options, std::size_t registered_blocks = 256);
  ~RdmaPool();

  // Reads the catalog now, waiting for the server (for the proxy's start, before it serves).
  // Throws ClientError when the server cannot be reached.
  void read_catalog_now() { catalogs_.read_now(); }
  // The catalog last read; a fresh read starts in the background (on a worker) once it is older
  // than `max_age`, and takes its place when it lands. Never waits. Throws ClientError when no
  // catalog was ever read (the reason of the last failure, or that the first read is under way).
  const proto::Catalog& catalog(std::chrono::milliseconds max_age = std::chrono::milliseconds(5000)) { return catalogs_.get(max_age); }
  // Why the catalog catalog() returns is stale (the server did not answer its last read: the
  // reason and the catalog's age), or nullopt while the server answers.
  std::optional<std::string> catalog_staleness() const { return catalogs_.staleness(); }

  // A body block of registered memory (one chunk), shared by every movie session: Reads into it
  // land there directly (zero copy) and the socket write goes from it. None when the bound is
  // reached (the response then uses plain memory, and its bytes are copied out of the ring).
  std::optional<client::ReadBuffer> take_block();

  // Reads dest.size() bytes of `movie` at `offset`, of the version `content` names when it is known
  // (the one the response's ETag promised: a session on another version fails, and the next is
  // opened anew). `done` runs later, on the io thread. Returns an id for cancel().
  std::uint64_t read(const std::string& movie, const proto::ContentId& content, std::uint64_t offset, std::span<std::uint8_t> dest,
                     Done done);
  // The caller no longer wants the read (its HTTP client left): `done` will not run, and the
  // destination is not written.
  void cancel(std::uint64_t id) noexcept;

  // Closes every session, dropping the reads still waiting without running their callbacks (the
  // proxy is stopping). Each callback may hold the last reference to an HTTP connection, whose
  // destructor cancels its reads here and counts itself out of the metrics: call it while those
  // exist. The destructor calls it too.
  void close() noexcept;

  std::size_t sessions() const noexcept { return movies_.size(); }
  // For /metrics: sessions open, and the reads of every session since the start.
  RdmaFigures figures() const;
  std::string server() const { return server_.to_string(); }
  const client::Uri& server_uri() const noexcept { return server_; }
  boost::asio::io_context& io() const noexcept { return io_; }
  // How live channels are read (the same read depth and chunk size as the movies).
  client::LiveOptions live_options() const;
  // Live channels over UDP are multicast: the group to join (empty: none given).
  void set_multicast(std::string group, std::string interface) {
    multicast_group_ = std::move(group);
    multicast_interface_ = std::move(interface);
  }
  bool udp() const noexcept { return options_.transport == client::Transport::udp; }
  client::MulticastLiveOptions multicast_options() const;
  // Opens sessions and live sources off the event loop.
  SessionOpener& opener() noexcept { return opener_; }

 private:
  struct Movie;
  std::shared_ptr<Movie> movie_session(const std::string& name, const proto::ContentId& content);
  // Opens (`reopen`: reopens after a lost connection) `m`'s session on a worker, retrying on the
  // reconnect policy.
  void open(const std::shared_ptr<Movie>& m, bool reopen);
  void opened(const std::shared_ptr<Movie>& m, std::unique_ptr<client::Session> session, const std::string& error, unsigned attempts);
  void issue(const std::shared_ptr<Movie>& m, std::uint64_t id);  // a queued read, to its session
  void lost(const std::shared_ptr<Movie>& m, const std::string& why);
  void schedule(const std::shared_ptr<Movie>& m);
  void drive(const std::shared_ptr<Movie>& m);
  void watch(const std::shared_ptr<Movie>& m);
  void wait_on(const std::weak_ptr<Movie>& m, bool completions, boost::asio::posix::stream_descriptor* d);
  void fail(const std::shared_ptr<Movie>& m, const std::string& error);
  void sweep();
  void retire(const Movie& m);  // a movie session closes: its figures go into retired_

  boost::asio::io_context& io_;
  client::Uri server_;
  client::SessionOptions options_;
  std::string multicast_group_, multicast_interface_;
  CatalogCache catalogs_;                                 // before opener_, which is joined first; it counts into retired_
  client::Stats retired_;                                 // of the sessions closed so far
  std::shared_ptr<client::BufferPool> blocks_;            // take_block(): every session reads into it
  std::map<std::string, std::shared_ptr<Movie>> movies_;  // by name and version (Movie::key)
  std::map<std::uint64_t, std::weak_ptr<Movie>> reads_;   // read id -> its movie session
  std::uint64_t next_read_ = 1;
  boost::asio::steady_timer sweeper_;
  SessionOpener opener_;  // last: its workers are joined before the rest goes
};

}  // namespace vod::proxy
