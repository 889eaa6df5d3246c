// SPDX-License-Identifier: LGPL-2.1-or-later
#include "movie_pool.hpp"

#include "vod/log.hpp"

namespace vod::mount {

MoviePool::MoviePool(client::Uri server, client::SessionOptions options, PoolLimits limits)
    : server_(std::move(server)), options_(std::move(options)), limits_(limits) {
  options_.engine.readahead_bytes = std::max(limits_.readahead_bytes, options_.engine.chunk_size);
}

MoviePool::~MoviePool() = default;

MoviePool::Connection& MoviePool::borrow(const std::string& name, std::uint64_t offset, std::size_t length, bool& sequential) {
  std::unique_lock lock(mutex_);
  for (;;) {
    Movie& m = movies_[name];
    Connection* idle = nullptr;
    Connection* follows = nullptr;
    // A reader's stream: reads near where its last one ended. The kernel's read-ahead sends several
    // reads of one stream at once, and threads may deliver them slightly out of order.
    const std::uint64_t window = std::max<std::uint64_t>(limits_.readahead_bytes, 1u << 20);
    for (auto& c : m.connections) {
      const bool near = c.next != UINT64_MAX && offset + window > c.next && offset < c.next + window;
      if (near && (!follows || (follows->busy && !c.busy))) follows = &c;
      else if (!c.busy && (!idle || c.used < idle->used)) idle = &c;  // the least recently used
    }
    Connection* take = nullptr;
    if (follows) {
      if (follows->busy) {  // the reader this continues is mid-read: its read-ahead has our bytes
        returned_.wait(lock);
        continue;
      }
      take = follows;
      sequential = true;
    } else if (idle && m.connections.size() + m.opening >= limits_.sessions) {
      take = idle;
      sequential = false;
    } else if (m.connections.size() + m.opening < limits_.sessions) {
      ++m.opening;
      lock.unlock();
      std::unique_ptr<client::Session> session;
      try {
        client::Uri uri = server_;
        uri.movie = name;
        session = std::make_unique<client::Session>(uri, options_);
      } catch (...) {
        lock.lock();
        --movies_[name].opening;
        returned_.notify_all();
        throw;
      }
      lock.lock();
      Movie& again = movies_[name];
      --again.opening;
      log::info("mount", "connection " + std::to_string(again.connections.size() + 1) + " for '" + name + "' on " +
                             session->server() + ": " + std::to_string(session->read_depth()) + " Reads in flight");
      again.connections.push_back(Connection{std::move(session), UINT64_MAX, false, std::chrono::steady_clock::now()});
      take = &again.connections.back();
      sequential = true;  // a new reader: assume it goes on from here
    } else {
      returned_.wait(lock);
      continue;
    }
    take->busy = true;
    take->next = sequential && take->next != UINT64_MAX ? std::max(take->next, offset + length) : offset + length;
    return *take;
  }
}

void MoviePool::give_back(const std::string& name, Connection& c, bool failed) {
  std::lock_guard lock(mutex_);
  Movie& m = movies_[name];
  if (failed) {
    m.connections.remove_if([&](const Connection& x) { return &x == &c; });
  } else {
    c.busy = false;
    c.used = std::chrono::steady_clock::now();
  }
  returned_.notify_all();
}

std::size_t MoviePool::read(const std::string& movie, std::uint64_t offset, std::span<std::uint8_t> dest) {
  bool sequential = false;
  Connection& c = borrow(movie, offset, dest.size(), sequential);
  try {
    // Read-ahead follows the access pattern: on for a reader that goes on where it stopped, off for
    // random reads (it would fetch megabytes nobody asked for).
    c.session->engine().set_readahead(sequential && limits_.readahead_bytes > 0);
    const std::size_t got = c.session->pread(offset, dest);
    give_back(movie, c, false);
    return got;
  } catch (...) {
    give_back(movie, c, true);
    throw;
  }
}

void MoviePool::close_idle() {
  std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  for (auto it = movies_.begin(); it != movies_.end();) {
    auto& list = it->second.connections;
    list.remove_if([&](const Connection& c) { return !c.busy && now - c.used > limits_.idle_close; });
    if (list.empty() && it->second.opening == 0) it = movies_.erase(it);
    else ++it;
  }
}

std::size_t MoviePool::connections() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [name, m] : movies_) n += m.connections.size();
  return n;
}

}  // namespace vod::mount
