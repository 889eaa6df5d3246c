// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_relay.hpp"

namespace vod::proxy {

namespace asio = boost::asio;

LiveRelay::LiveRelay(asio::io_context& io, std::unique_ptr<client::LiveSource> source, std::chrono::milliseconds idle_look)
    : io_(io), source_(std::move(source)), idle_look_(idle_look), timer_(io) {}

LiveRelay::~LiveRelay() { close(); }

void LiveRelay::close() noexcept {
  closed_ = true;
  done_ = nullptr;
  timer_.cancel();
  for (auto& w : watches_) {
    w->cancel();
    w->release();  // the fds belong to the session (libibverbs, librdmacm, its sockets)
  }
  watches_.clear();
}

void LiveRelay::next(std::span<std::uint8_t> dest, Done done) {
  dest_ = dest;
  done_ = std::move(done);
  attempt();
}

void LiveRelay::attempt() {
  if (closed_ || !done_) return;
  client::LiveChunk chunk;
  std::string error;
  try {
    chunk = source_->read(dest_, std::chrono::milliseconds(0));
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (chunk.bytes > 0 || !error.empty()) {
    auto done = std::move(done_);
    done_ = nullptr;
    asio::post(io_, [done = std::move(done), chunk, error] { done(chunk, error); });
    return;
  }
  watch();
}

void LiveRelay::watch() {
  // The fds change when the session reconnects; watch whichever it has now.
  for (auto& w : watches_) {
    w->cancel();
    w->release();
  }
  watches_.clear();
  auto self = shared_from_this();
  for (int fd : source_->wait_fds()) {
    watches_.push_back(std::make_unique<asio::posix::stream_descriptor>(io_, fd));
    watches_.back()->async_wait(asio::posix::stream_descriptor::wait_read, [self](const boost::system::error_code& ec) {
      if (!ec) self->attempt();
    });
  }
  // Header polling, backoffs and multicast hole timeouts have no fd.
  timer_.expires_after(idle_look_);
  timer_.async_wait([self](const boost::system::error_code& ec) {
    if (!ec) self->attempt();
  });
}

}  // namespace vod::proxy
