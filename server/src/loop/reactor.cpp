// SPDX-License-Identifier: LGPL-2.1-or-later
#include "loop/reactor.hpp"

#include <sys/epoll.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vod::server::loop {

namespace {
constexpr int kBatch = 64;  // events per epoll_wait
}

void Reactor::Registration::reset() noexcept {
  if (reactor_) std::exchange(reactor_, nullptr)->remove(token_);
}

void Reactor::Timer::cancel() noexcept {
  if (reactor_) std::exchange(reactor_, nullptr)->cancel(id_);
}

bool Reactor::Timer::armed() const noexcept { return reactor_ && reactor_->timers_.count(id_) > 0; }

Reactor::Reactor() : epoll_(epoll_create1(EPOLL_CLOEXEC)) {
  if (!epoll_) throw std::runtime_error(std::string("epoll_create1: ") + std::strerror(errno));
}

Reactor::Registration Reactor::add(int fd, Handler on_readable) {
  if (tokens_.count(fd)) throw std::runtime_error("event loop: fd " + std::to_string(fd) + " is registered already");
  const std::uint64_t token = next_token_++;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = token;
  if (epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fd, &ev) != 0)
    throw std::runtime_error("epoll_ctl ADD of fd " + std::to_string(fd) + ": " + std::strerror(errno));
  handlers_.emplace(token, Entry{fd, std::make_shared<const Handler>(std::move(on_readable))});
  tokens_[fd] = token;
  return Registration(this, token);
}

void Reactor::remove(std::uint64_t token) noexcept {
  auto it = handlers_.find(token);
  if (it == handlers_.end()) return;
  // The fd may be closed already (its owner closed it first): the kernel forgot it then.
  epoll_ctl(epoll_.get(), EPOLL_CTL_DEL, it->second.fd, nullptr);
  tokens_.erase(it->second.fd);
  handlers_.erase(it);
}

Reactor::Timer Reactor::at(Clock::time_point when, Handler fire) {
  const std::uint64_t id = next_timer_++;
  const auto where = deadlines_.emplace(when, id);
  timers_.emplace(id, std::make_pair(where, std::move(fire)));
  return Timer(this, id);
}

void Reactor::cancel(std::uint64_t id) noexcept {
  auto it = timers_.find(id);
  if (it == timers_.end()) return;
  deadlines_.erase(it->second.first);
  timers_.erase(it);
}

std::optional<Reactor::Clock::time_point> Reactor::next_timer() const {
  if (deadlines_.empty()) return std::nullopt;
  return deadlines_.begin()->first;
}

std::size_t Reactor::run_due_timers() {
  std::size_t ran = 0;
  const auto now = Clock::now();
  // Only what was due when this started: a timer a handler adds for "now" waits for the next turn.
  std::vector<std::uint64_t> due;
  for (auto it = deadlines_.begin(); it != deadlines_.end() && it->first <= now; ++it) due.push_back(it->second);
  for (std::uint64_t id : due) {
    auto it = timers_.find(id);
    if (it == timers_.end()) continue;  // cancelled by an earlier timer of this turn
    Handler fire = std::move(it->second.second);
    deadlines_.erase(it->second.first);
    timers_.erase(it);
    fire();
    ++ran;
  }
  return ran;
}

std::size_t Reactor::run_once(std::optional<Clock::duration> max_wait) {
  int timeout_ms = -1;
  auto limit = max_wait;
  if (auto next = next_timer()) {
    const auto left = *next - Clock::now();
    limit = limit ? std::min(*limit, left) : left;
  }
  if (limit) {
    // Rounded up: a wait that ends early would spin on a timer that is not due yet.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(std::max(*limit, Clock::duration::zero())).count();
    timeout_ms = static_cast<int>(std::min<std::int64_t>(ms, 24 * 3600 * 1000));
  }
  epoll_event events[kBatch];
  const int n = epoll_wait(epoll_.get(), events, kBatch, timeout_ms);
  if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("epoll_wait: ") + std::strerror(errno));
  std::size_t ran = 0;
  for (int i = 0; i < n; ++i) {
    const std::uint64_t token = events[i].data.u64;  // a copy: epoll_event is packed on x86-64, a reference would be misaligned
    auto it = handlers_.find(token);
    if (it == handlers_.end()) continue;  // removed by a handler earlier in this batch
    // Held for the call: the handler may remove its own registration (and with it the entry).
    const std::shared_ptr<const Handler> handler = it->second.handler;
    (*handler)();
    ++ran;
  }
  ran += run_due_timers();
  if (ran)
    for (const auto& h : after_turn_) h();
  return ran;
}

}  // namespace vod::server::loop
