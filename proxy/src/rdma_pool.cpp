// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rdma_pool.hpp"

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
  std::string name;
  std::unique_ptr<client::Session> session;
  struct Pending {
    std::uint64_t engine_id;
    Done done;
  };
  std::map<std::uint64_t, Pending> pending;  // by pool read id
  FdWatch completions, events;
  std::chrono::steady_clock::time_point last_used;
  bool drive_scheduled = false;
  ~Movie() {
    completions.reset();
    events.reset();
  }
};

RdmaPool::RdmaPool(asio::io_context& io, client::Uri server, client::SessionOptions options)
    : io_(io), server_(std::move(server)), options_(options), sweeper_(io) {
  server_.movie.reset();
  sweep();
}

RdmaPool::~RdmaPool() = default;

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

const proto::Catalog& RdmaPool::catalog(std::chrono::milliseconds max_age) {
  const auto now = std::chrono::steady_clock::now();
  if (!catalog_session_ || now - catalog_read_ > max_age) {
    // A new connection sees the newest catalog generation (the old one stays readable until then).
    catalog_ok_ = false;
    auto fresh = std::make_unique<client::Session>(server_, options_);
    if (catalog_session_) retired_.merge(catalog_session_->stats());
    catalog_session_ = std::move(fresh);
    catalog_read_ = now;
    catalog_ok_ = true;
  }
  return catalog_session_->catalog();
}

std::shared_ptr<RdmaPool::Movie> RdmaPool::movie_session(const std::string& name) {
  auto it = movies_.find(name);
  if (it != movies_.end()) return it->second;
  auto m = std::make_shared<Movie>();
  m->name = name;
  client::Uri uri = server_;
  uri.movie = name;
  m->session = std::make_unique<client::Session>(uri, options_);
  log::info("proxy", "RDMA session for '" + name + "' on " + m->session->server() + ": " + std::to_string(m->session->read_depth()) +
                         " Reads in flight");
  movies_[name] = m;
  return m;
}

std::uint64_t RdmaPool::read(const std::string& movie, std::uint64_t offset, std::span<std::uint8_t> dest, Done done) {
  std::shared_ptr<Movie> m;
  try {
    m = movie_session(movie);
  } catch (const std::exception& e) {
    const std::string error = e.what();
    asio::post(io_, [done = std::move(done), error] { done(0, error); });
    return 0;
  }
  const std::uint64_t id = next_read_++;
  m->last_used = std::chrono::steady_clock::now();
  const std::uint64_t engine_id = m->session->pread_async(offset, dest, [this, id, weak = std::weak_ptr<Movie>(m)](std::size_t n) {
    auto mv = weak.lock();
    if (!mv) return;
    auto p = mv->pending.find(id);
    if (p == mv->pending.end()) return;
    Done d = std::move(p->second.done);
    mv->pending.erase(p);
    reads_.erase(id);
    d(n, {});
  });
  m->pending[id] = {engine_id, std::move(done)};
  reads_[id] = m;
  schedule(m);  // post the Reads soon, from the event loop rather than from inside a callback
  return id;
}

void RdmaPool::cancel(std::uint64_t id) noexcept {
  auto r = reads_.find(id);
  if (r == reads_.end()) return;
  if (auto m = r->second.lock()) {
    auto p = m->pending.find(id);
    if (p != m->pending.end()) {
      m->session->cancel(p->second.engine_id);
      m->pending.erase(p);
    }
  }
  reads_.erase(r);
}

void RdmaPool::fail(const std::shared_ptr<Movie>& m, const std::string& error) {
  log::warn("proxy", "RDMA session for '" + m->name + "' failed: " + error);
  if (movies_.count(m->name)) retire(*m);
  movies_.erase(m->name);
  auto pending = std::move(m->pending);
  m->pending.clear();
  for (auto& [id, p] : pending) {
    reads_.erase(id);
    m->session->cancel(p.engine_id);
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
  try {
    // Reconnection, when the server went away, happens inside progress() (with backoff).
    m->session->progress(std::chrono::milliseconds(0));
    m->session->engine().arm();
    m->session->progress(std::chrono::milliseconds(0));  // completions that raced the arming
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
}

void RdmaPool::wait_on(const std::weak_ptr<Movie>& weak, bool completions, asio::posix::stream_descriptor* d) {
  d->async_wait(asio::posix::stream_descriptor::wait_read, [this, weak, completions, d](const boost::system::error_code& ec) {
    auto m = weak.lock();
    if (ec || !m) return;
    auto still_watching = [&] { return (completions ? m->completions : m->events).descriptor.get() == d; };
    if (!still_watching()) return;  // replaced after a reconnect
    if (completions) m->session->engine().consume();
    drive(m);
    if (still_watching()) wait_on(weak, completions, d);
  });
}

void RdmaPool::sweep() {
  // Sessions nobody has read from for a while are closed; the next request reopens them.
  const auto now = std::chrono::steady_clock::now();
  for (auto it = movies_.begin(); it != movies_.end();) {
    if (it->second->pending.empty() && now - it->second->last_used > kIdleSession) {
      log::info("proxy", "closing the idle RDMA session for '" + it->first + "'");
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

RdmaFigures RdmaPool::figures() const {
  RdmaFigures f;
  f.sessions = movies_.size();
  f.totals = retired_;
  for (const auto& [name, m] : movies_)
    if (m->session) f.totals.merge(m->session->stats());
  if (catalog_session_) f.totals.merge(catalog_session_->stats());
  f.catalog_ok = catalog_ok_;
  return f;
}

}  // namespace vod::proxy
