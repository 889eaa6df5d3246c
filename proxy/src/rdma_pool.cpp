// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rdma_pool.hpp"

#include <algorithm>

#include "movie_session_state.hpp"
#include "vod/log.hpp"

namespace vod::proxy {

namespace asio = boost::asio;

namespace {
constexpr auto kIdleSession = std::chrono::seconds(60);

// An asio wait on a file descriptor asio does not own (it belongs to libibverbs or librdmacm).
struct FdWatch {
  std::unique_ptr<asio::posix::stream_descriptor> descriptor;
  int fd = -1;
  void reset() {
    if (descriptor) {
      descriptor->cancel();
      descriptor->release();  // never close the fd: its owner does
    }
    descriptor.reset();
    fd = -1;
  }
};
}  // namespace

struct RdmaPool::Movie {
  std::string name, key;                                 // key: in movies_, the name and the version asked for (each its own session)
  MovieSessionState state = MovieSessionState::opening;  // movie_session_state.hpp; every change through next()
  std::unique_ptr<client::Session> session;              // set exactly while it is open
  std::uint64_t size = 0;                                // as first opened: a reopen must find the same movie
  proto::ContentId content;                              // its version: the ETag's, or as first opened; a reopen needs the same
  struct Pending {
    std::uint64_t offset;
    std::span<std::uint8_t> dest;
    Done done;
    std::uint64_t engine_id = 0;
    bool issued = false;  // given to the session (a reopen gives it again)
  };
  std::map<std::uint64_t, Pending> pending;  // by pool read id
  FdWatch completions, events;
  // progress(0) at the session's next deadline, which no fd announces: a UDP record's repair
  // timer (a server that went quiet sends nothing to wake us), the stuck-Read check.
  std::unique_ptr<asio::steady_timer> timer;
  std::chrono::steady_clock::time_point last_used;
  bool drive_scheduled = false;
  ~Movie() {
    completions.reset();
    events.reset();
    if (timer) timer->cancel();
  }
};

RdmaPool::RdmaPool(asio::io_context& io, client::Uri server, client::SessionOptions options, std::size_t registered_blocks)
    : io_(io),
      server_(std::move(server)),
      options_(options),
      catalogs_(server_, options_, opener_, [this](const client::Stats& s) { retired_.merge(s); }),
      sweeper_(io),
      opener_(io, 2) {
  server_.movie.reset();
  if (registered_blocks > 0) {
    client::BufferPoolOptions b;
    b.buffer_bytes = options_.engine.chunk_size;
    b.buffers_per_arena = 16;
    b.max_buffers = registered_blocks;
    blocks_ = client::BufferPool::make(b);
  }
  sweep();
}

RdmaPool::~RdmaPool() { close(); }

void RdmaPool::close() noexcept {
  auto movies = std::move(movies_);
  movies_.clear();
  for (auto& [name, m] : movies) {
    retire(*m);
    auto pending = std::move(m->pending);
    m->pending.clear();
    pending.clear();  // may run ~HttpConnection, which cancels here: the maps still exist
  }
  movies.clear();
  reads_.clear();
}

client::LiveOptions RdmaPool::live_options() const {
  client::LiveOptions o;
  o.chunk_size = options_.engine.chunk_size;
  o.read_depth = options_.engine.read_depth;
  o.connect_timeout = options_.connect_timeout;
  o.reconnect = options_.reconnect;
  return o;
}

client::MulticastLiveOptions RdmaPool::multicast_options() const {
  client::MulticastLiveOptions o;
  o.group = multicast_group_;
  o.interface = multicast_interface_;
  o.udp = options_.udp;
  o.connect_timeout = options_.connect_timeout;
  return o;
}

std::shared_ptr<RdmaPool::Movie> RdmaPool::movie_session(const std::string& name, const proto::ContentId& content) {
  // One session per version asked for (names hold no control character): a response planned from an
  // older catalog finishes on its ETag's version while a newer one opens its own (the old idles out).
  const std::string key = name + '\n' + content.hex();
  auto it = movies_.find(key);
  if (it != movies_.end()) return it->second;
  auto m = std::make_shared<Movie>();
  m->name = name;
  m->key = key;
  m->content = content;
  m->last_used = std::chrono::steady_clock::now();
  movies_[key] = m;
  open(m, false);
  return m;
}

void RdmaPool::open(const std::shared_ptr<Movie>& m, bool reopen) {
  client::Uri uri = server_;
  uri.movie = m->name;
  client::SessionOptions o = options_;
  o.reconnect.in_place = false;  // a lost connection comes back here (lost()), not as a wait inside progress()
  // Retried on the reconnect policy (--reconnect-for) whether it is a first open or a reopen: a
  // server that is restarting, or hung for a moment, is waited for on a worker, not given up on.
  const std::optional<client::ReconnectPolicy> retry = options_.reconnect;
  opener_.open(std::move(uri), std::move(o), retry,
               [this, weak = std::weak_ptr<Movie>(m), reopen](std::unique_ptr<client::Session> session, const std::string& error,
                                                              unsigned attempts) {
                 auto mv = weak.lock();
                 if (!mv) return;
                 if (reopen && session)
                   log::info("proxy", "reconnected to " + session->server() + " for '" + mv->name + "' after " + std::to_string(attempts) +
                                          " attempt(s)");
                 opened(mv, std::move(session), error, attempts);
               });
}

void RdmaPool::opened(const std::shared_ptr<Movie>& m, std::unique_ptr<client::Session> session, const std::string& error, unsigned) {
  auto it = movies_.find(m->key);
  if (it == movies_.end() || it->second != m) {  // closed meanwhile (its readers left): not wanted any more
    if (session) retired_.merge(session->stats());
    return;
  }
  if (!session) return fail(m, error);
  const proto::ContentId got = session->movie() ? session->movie()->content : proto::ContentId{};  // settled by the opener
  // A reopen, or a version an ETag promised: the same identity and size (unknown is never the same).
  if ((must_match(m->state) || m->content.known()) && (!m->content.same(got) || (m->size && session->size() != m->size))) {
    retired_.merge(session->stats());
    return fail(m, "'" + m->name + "' on " + session->server() + " is " + got.hex() + ", " + std::to_string(session->size()) +
                       " bytes, not " + m->content.hex() + (m->size ? ", " + std::to_string(m->size) + " bytes" : std::string()) +
                       ": the movie changed");
  }
  m->state = next(m->state, MovieSessionEvent::opened);
  m->content = got;
  if (!m->size)
    log::info("proxy", "RDMA session for '" + m->name + "' on " + session->server() + ": " + std::to_string(session->read_depth()) +
                           " Reads in flight");
  m->size = session->size();
  if (blocks_) session->use_buffers(blocks_);
  m->session = std::move(session);
  std::vector<std::uint64_t> ids;
  for (const auto& [id, p] : m->pending) ids.push_back(id);
  for (std::uint64_t id : ids) issue(m, id);
}

void RdmaPool::issue(const std::shared_ptr<Movie>& m, std::uint64_t id) {
  auto p = m->pending.find(id);
  if (p == m->pending.end() || p->second.issued || !m->session) return;
  p->second.engine_id =
      m->session->pread_async(p->second.offset, p->second.dest, [this, id, weak = std::weak_ptr<Movie>(m)](std::size_t n) {
        auto mv = weak.lock();
        if (!mv) return;
        auto q = mv->pending.find(id);
        if (q == mv->pending.end()) return;
        Done d = std::move(q->second.done);
        mv->pending.erase(q);
        reads_.erase(id);
        d(n, {});
      });
  p->second.issued = true;
  schedule(m);  // post the Reads soon, from the event loop rather than from inside a callback
}

void RdmaPool::lost(const std::shared_ptr<Movie>& m, const std::string& why) {
  // Reopened on a worker, with the reconnect policy; the reads wait, and go again to the new
  // session (byte ranges are idempotent: what a lost Read had placed is simply placed again).
  log::warn("proxy", "RDMA session for '" + m->name + "' lost (" + why + "); reconnecting off the event loop");
  m->completions.reset();
  m->events.reset();
  if (m->timer) m->timer->cancel();
  retire(*m);
  m->session.reset();
  m->state = next(m->state, MovieSessionEvent::lost);
  for (auto& [id, p] : m->pending) p.issued = false;
  open(m, true);
}

std::uint64_t RdmaPool::read(const std::string& movie, const proto::ContentId& content, std::uint64_t offset, std::span<std::uint8_t> dest,
                             Done done) {
  std::shared_ptr<Movie> m = movie_session(movie, content);
  const std::uint64_t id = next_read_++;
  m->last_used = std::chrono::steady_clock::now();
  m->pending[id] = Movie::Pending{offset, dest, std::move(done)};
  reads_[id] = m;
  issue(m, id);  // at once when the session is open; else when it is
  return id;
}

void RdmaPool::cancel(std::uint64_t id) noexcept {
  auto r = reads_.find(id);
  if (r == reads_.end()) return;
  if (auto m = r->second.lock()) {
    auto p = m->pending.find(id);
    if (p != m->pending.end()) {
      if (p->second.issued && m->session) m->session->cancel(p->second.engine_id);
      m->pending.erase(p);
    }
  }
  reads_.erase(r);
}

void RdmaPool::fail(const std::shared_ptr<Movie>& m, const std::string& error) {
  log::warn("proxy", "RDMA session for '" + m->name + "' failed: " + error);
  m->state = next(m->state, MovieSessionEvent::failed);
  if (auto it = movies_.find(m->key); it != movies_.end() && it->second == m) {
    retire(*m);
    movies_.erase(it);
  }
  auto pending = std::move(m->pending);
  m->pending.clear();
  for (auto& [id, p] : pending) {
    reads_.erase(id);
    if (p.issued && m->session) m->session->cancel(p.engine_id);
    p.done(0, error);
  }
}

void RdmaPool::schedule(const std::shared_ptr<Movie>& m) {
  // read() is often called from a completion callback, i.e. from inside this session's progress();
  // driving it again there would re-enter the engine. One posted drive per session is enough.
  if (m->drive_scheduled) return;
  m->drive_scheduled = true;
  asio::post(io_, [this, weak = std::weak_ptr<Movie>(m)] {
    if (auto mv = weak.lock()) {
      mv->drive_scheduled = false;
      drive(mv);
    }
  });
}

void RdmaPool::drive(const std::shared_ptr<Movie>& m) {
  if (!m->session) return;  // being (re)opened: its reads go out when it is
  try {
    m->session->progress(std::chrono::milliseconds(0));
    m->session->engine().arm();
    m->session->progress(std::chrono::milliseconds(0));  // completions that raced the arming
  } catch (const client::ClientError& e) {
    if (e.kind() == client::ErrorKind::connection_lost) return lost(m, e.what());
    fail(m, e.what());
    return;
  } catch (const std::exception& e) {
    fail(m, e.what());
    return;
  }
  watch(m);
}

void RdmaPool::watch(const std::shared_ptr<Movie>& m) {
  auto& engine = m->session->engine();
  for (bool completions : {true, false}) {
    FdWatch& w = completions ? m->completions : m->events;
    const int fd = completions ? engine.wait_fd() : engine.cm_fd();
    if (w.fd == fd && w.descriptor) continue;  // a reconnect changes the fds
    w.reset();
    if (fd < 0) continue;
    w.fd = fd;
    w.descriptor = std::make_unique<asio::posix::stream_descriptor>(io_, fd);
    wait_on(m, completions, w.descriptor.get());
  }
  const auto next = m->session->next_deadline();
  if (!next) {
    if (m->timer) m->timer->cancel();
    return;
  }
  if (!m->timer) m->timer = std::make_unique<asio::steady_timer>(io_);
  m->timer->expires_at(*next);  // cancels the wait armed by the last drive
  m->timer->async_wait([this, weak = std::weak_ptr<Movie>(m)](const boost::system::error_code& ec) {
    auto mv = weak.lock();
    if (ec || !mv || !mv->session) return;
    drive(mv);
  });
}

void RdmaPool::wait_on(const std::weak_ptr<Movie>& weak, bool completions, asio::posix::stream_descriptor* d) {
  d->async_wait(asio::posix::stream_descriptor::wait_read, [this, weak, completions, d](const boost::system::error_code& ec) {
    auto m = weak.lock();
    if (ec || !m) return;
    auto still_watching = [&] { return (completions ? m->completions : m->events).descriptor.get() == d; };
    if (!still_watching() || !m->session) return;  // replaced after a reconnect
    if (completions) m->session->engine().consume();
    drive(m);
    if (still_watching()) wait_on(weak, completions, d);
  });
}

void RdmaPool::sweep() {
  // Sessions nobody has read from for a while are closed; the next request reopens them.
  const auto now = std::chrono::steady_clock::now();
  for (auto it = movies_.begin(); it != movies_.end();) {
    if (it->second->pending.empty() && has_session(it->second->state) && now - it->second->last_used > kIdleSession) {
      log::info("proxy", "closing the idle RDMA session for '" + it->second->name + "'");
      retire(*it->second);
      it = movies_.erase(it);
    } else {
      ++it;
    }
  }
  sweeper_.expires_after(std::chrono::seconds(10));
  sweeper_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) sweep();
  });
}

void RdmaPool::retire(const Movie& m) {
  if (m.session) retired_.merge(m.session->stats());
}

std::optional<client::ReadBuffer> RdmaPool::take_block() {
  if (!blocks_) return std::nullopt;
  return blocks_->take();
}

RdmaFigures RdmaPool::figures() const {
  RdmaFigures f;
  if (blocks_) {
    f.buffers = blocks_->figures();
    f.buffer_bytes = blocks_->buffer_bytes();
  }
  f.sessions = movies_.size();
  f.totals = retired_;
  for (const auto& [name, m] : movies_)
    if (m->session) f.totals.merge(m->session->stats());
  f.catalog_ok = catalogs_.ok();
  return f;
}

}  // namespace vod::proxy
