// SPDX-License-Identifier: LGPL-2.1-or-later
#include "movie_pool.hpp"

#include <algorithm>

#include "vod/log.hpp"

namespace vod::mount {

MoviePool::MoviePool(client::Uri server, client::SessionOptions options, PoolLimits limits)
    : server_(std::move(server)), options_(std::move(options)), limits_(limits) {
  options_.engine.readahead_bytes = std::max(limits_.readahead_bytes, options_.engine.chunk_size);
  if (limits_.zero_copy) {
    client::BufferPoolOptions o;
    o.buffer_bytes = limits_.buffer_bytes;
    o.buffers_per_arena = std::max<std::size_t>(1, std::min<std::size_t>(limits_.max_buffers, (8u << 20) / limits_.buffer_bytes));
    o.max_buffers = limits_.max_buffers;
    pool_ = client::BufferPool::make(o);
  }
}

MoviePool::~MoviePool() { close(); }

void MoviePool::close() {
  std::map<std::string, std::list<Connection>> gone;
  {
    std::lock_guard lock(mutex_);
    gone.swap(movies_);
  }
}  // each connection's thread stops here, outside the lock (and before the buffer pool goes)

std::vector<client::ReadBuffer> MoviePool::take_buffers(std::size_t length) {
  std::vector<client::ReadBuffer> out;
  if (!pool_) return out;
  for (std::size_t have = 0; have < length; have += out.back().size()) {
    auto b = pool_->take();
    if (!b) return {};  // the pool is dry: this read lands in plain memory (and is copied)
    out.push_back(std::move(*b));
  }
  return out;
}

void MoviePool::read(const std::string& movie, std::uint64_t offset, std::size_t length, ReadDone done) {
  ReadJob job;
  job.offset = offset;
  job.length = length;
  job.done = std::move(done);
  job.registered = take_buffers(length);
  {
    std::lock_guard lock(mutex_);
    auto& list = movies_[movie];
    list.remove_if([](const Connection& c) { return c.link->failed() && c.link->outstanding() == 0; });
    const std::uint64_t window = std::max<std::uint64_t>(limits_.readahead_bytes, 1u << 20);
    Connection* follows = nullptr;
    Connection* least = nullptr;
    for (auto& c : list) {
      if (c.link->failed()) continue;
      if (offset + window > c.next && offset < c.next + window && !follows) follows = &c;
      if (!least || c.link->outstanding() < least->link->outstanding()) least = &c;
    }
    bool sequential = follows != nullptr;
    Connection* take = follows;
    if (!take && (list.size() < limits_.sessions || !least)) {
      client::Uri uri = server_;
      uri.movie = movie;
      const std::string label = "connection " + std::to_string(++opened_) + " for '" + movie + "'";
      list.push_back(Connection{std::make_unique<MovieConnection>(uri, options_, pool_, label), offset});
      take = &list.back();
      sequential = true;  // a new reader: assume it goes on from here
    } else if (!take) {
      take = least;
    }
    take->next = sequential ? std::max(take->next, offset + length) : offset + length;
    // The engine's read-ahead into the ring follows the access pattern: on for a reader that goes
    // on where it stopped, off for random reads (it would fetch megabytes nobody asked for), and
    // off when registered buffers take the reads and the kernel reads ahead into them itself.
    job.readahead = sequential && limits_.readahead_bytes > 0 && !(pool_ && limits_.kernel_readahead && !job.registered.empty());
    take->link->submit(std::move(job));  // under the lock: close_idle() cannot take the connection away meanwhile
  }
}

void MoviePool::close_idle() {
  std::list<Connection> gone;
  {
    std::lock_guard lock(mutex_);
    const auto now = std::chrono::steady_clock::now();
    for (auto it = movies_.begin(); it != movies_.end();) {
      auto& list = it->second;
      for (auto c = list.begin(); c != list.end();) {
        const bool idle = c->link->outstanding() == 0 && (c->link->failed() || now - c->link->last_used() > limits_.idle_close);
        if (idle) gone.splice(gone.end(), list, c++);
        else ++c;
      }
      if (list.empty()) it = movies_.erase(it);
      else ++it;
    }
  }
}  // closed here, outside the lock: a disconnect takes a while

std::size_t MoviePool::connections() const {
  std::lock_guard lock(mutex_);
  std::size_t n = 0;
  for (const auto& [name, list] : movies_) n += list.size();
  return n;
}

client::BufferPool::Figures MoviePool::buffers() const { return pool_ ? pool_->figures() : client::BufferPool::Figures{}; }

}  // namespace vod::mount
