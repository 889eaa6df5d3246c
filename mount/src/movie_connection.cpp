// SPDX-License-Identifier: LGPL-2.1-or-later
#include "movie_connection.hpp"

#include <cerrno>

#include "vod/client/errors.hpp"
#include "vod/log.hpp"

namespace vod::mount {

namespace {

// The errno a failed read returns: the file is gone (ENOENT), or the server could not serve it
// within the reconnect time, or now serves other bytes under the name (EIO: never wrong bytes).
int errno_of(const client::ClientError& e) {
  switch (e.kind()) {
    case client::ErrorKind::unknown_movie: return ENOENT;
    case client::ErrorKind::out_of_range: return EINVAL;
    default: return EIO;
  }
}

ReadReply failure(int error, std::string why) {
  ReadReply r;
  r.error = error;
  r.message = std::move(why);
  return r;
}

}  // namespace

MovieConnection::MovieConnection(client::Uri uri, client::SessionOptions options, std::shared_ptr<client::BufferPool> pool,
                                 std::string label)
    : uri_(std::move(uri)),
      options_(std::move(options)),
      pool_(std::move(pool)),
      label_(std::move(label)),
      used_(std::chrono::steady_clock::now()) {
  thread_ = std::thread([this] { run(); });
}

MovieConnection::~MovieConnection() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    if (session_) session_->interrupt();
  }
  thread_.join();
}

void MovieConnection::submit(ReadJob job) {
  std::unique_lock lock(mutex_);
  if (failed_ || stopping_) {
    lock.unlock();
    job.done(failure(EIO, "the connection for this movie has failed"));
    return;
  }
  ++outstanding_;
  used_ = std::chrono::steady_clock::now();
  inbox_.push_back(std::move(job));
  if (session_) session_->interrupt();  // wakes its progress(); opening, the thread looks at the inbox next
}

unsigned MovieConnection::outstanding() const {
  std::lock_guard lock(mutex_);
  return outstanding_;
}

bool MovieConnection::failed() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

std::chrono::steady_clock::time_point MovieConnection::last_used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

bool MovieConnection::open() {
  std::unique_ptr<client::Session> s;
  try {
    s = std::make_unique<client::Session>(uri_, options_);
    if (pool_) s->use_buffers(pool_);
  } catch (const client::ClientError& e) {
    log::error("mount", label_ + ": cannot connect (" + client::to_string(e.kind()) + "): " + e.what());
    fail_all(errno_of(e), e.what());
    return false;
  } catch (const std::exception& e) {
    log::error("mount", label_ + ": cannot connect: " + e.what());
    fail_all(EIO, e.what());
    return false;
  }
  log::info("mount", label_ + " on " + s->server() + ": " + std::to_string(s->read_depth()) + " Reads in flight" +
                         (pool_ ? ", reads land in registered buffers (zero copy)" : ", reads copied out of the ring"));
  std::lock_guard lock(mutex_);
  session_ = std::move(s);
  return true;
}

void MovieConnection::run() {
  if (!open()) return;
  for (;;) {
    std::deque<ReadJob> incoming;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) break;
      incoming.swap(inbox_);
    }
    try {
      while (!incoming.empty()) {
        ReadJob j = std::move(incoming.front());
        incoming.pop_front();
        start(std::move(j));
      }
      session_->progress(std::chrono::milliseconds(active_.empty() ? 1000 : 200));
    } catch (const client::Interrupted&) {
      session_->clear_interrupt();  // submit() or the destructor: the loop looks again
    } catch (const client::ClientError& e) {
      log::error("mount", label_ + ": reads fail (" + client::to_string(e.kind()) + "): " + e.what());
      for (ReadJob& j : incoming) active_.push_back(Active{std::move(j), {}, {}, 0});  // not started: fail them too
      fail_all(errno_of(e), e.what());
      return;
    } catch (const std::exception& e) {
      log::error("mount", label_ + ": reads fail: " + e.what());
      for (ReadJob& j : incoming) active_.push_back(Active{std::move(j), {}, {}, 0});
      fail_all(EIO, e.what());
      return;
    }
  }
  log::info("mount", label_ + " closed: " + session_->stats().summary());
  fail_all(EIO, "vod-mount is closing the connection");
}

void MovieConnection::start(ReadJob job) {
  session_->engine().set_readahead(job.readahead);
  active_.push_back(Active{std::move(job), {}, {}, 0});
  const auto it = std::prev(active_.end());
  ReadJob& j = it->job;
  // The destination, piece by piece: the registered buffers in turn, or the one plain block.
  std::vector<std::span<std::uint8_t>> dests;
  std::size_t left = j.length;
  for (client::ReadBuffer& b : j.registered) {
    const std::size_t n = std::min(left, b.size());
    dests.push_back(b.bytes().first(n));
    left -= n;
  }
  if (j.registered.empty()) {
    j.plain.resize(j.length);
    dests.emplace_back(j.plain);
  }
  it->got.assign(dests.size(), 0);
  for (const auto& d : dests) it->want.push_back(d.size());
  it->remaining = static_cast<unsigned>(dests.size());
  std::uint64_t at = j.offset;
  for (std::size_t i = 0; i < dests.size(); ++i) {
    session_->pread_async(at, dests[i], [this, it, i](std::size_t n) {
      it->got[i] = n;
      if (--it->remaining == 0) finish(it);
    });
    at += dests[i].size();
  }
}

void MovieConnection::finish(std::list<Active>::iterator it) {
  ReadReply r;
  const ReadJob& j = it->job;
  for (std::size_t i = 0; i < it->got.size(); ++i) {
    const std::uint8_t* data = j.registered.empty() ? j.plain.data() : j.registered[i].data();
    if (it->got[i] > 0) r.pieces.emplace_back(data, it->got[i]);
    r.bytes += it->got[i];
    if (it->got[i] < it->want[i]) break;  // the movie's end: nothing follows
  }
  j.done(r);  // the reply is written from the buffers: they go back to the pool only after it
  active_.erase(it);
  std::lock_guard lock(mutex_);
  --outstanding_;
  used_ = std::chrono::steady_clock::now();
}

void MovieConnection::fail_all(int error, const std::string& why) {
  // The session goes first: its Reads in flight may still land in these buffers until its
  // connection is destroyed.
  std::deque<ReadJob> waiting;
  std::unique_ptr<client::Session> gone;
  {
    std::lock_guard lock(mutex_);
    failed_ = true;
    waiting.swap(inbox_);
    gone = std::move(session_);
  }
  gone.reset();
  const ReadReply r = failure(error, why);
  for (Active& a : active_) a.job.done(r);
  for (ReadJob& j : waiting) j.done(r);
  std::lock_guard lock(mutex_);
  outstanding_ = 0;
  active_.clear();
}

}  // namespace vod::mount
