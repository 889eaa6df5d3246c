// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's one event loop: every fd it waits on and every deadline it keeps, in one place. An
// fd is registered once, with the handler that owns it, and stays registered until its
// Registration goes (RAII); a deadline is a Timer, cancelled when its owner drops it. So the loop
// never rebuilds a list of fds per turn nor finds an fd by its position in one, and whoever owns a
// socket, a CQ channel or a token's expiry owns its registration too.
//
// epoll, level-triggered: a handler that leaves data unread is called again on the next turn.
// Registrations carry a token that is never reused, so an event for an fd removed earlier in the
// same batch (its owner went away while another handler ran) is dropped, never delivered to a
// newer owner of the same fd number. Timers fire in deadline order, never before their time.
//
// Not thread-safe: the event-loop thread alone adds, removes and runs.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "vod/unique_fd.hpp"

namespace vod::server::loop {

class Reactor {
 public:
  using Clock = std::chrono::steady_clock;
  using Handler = std::function<void()>;

  // An fd's place in the loop; removes it (EPOLL_CTL_DEL) when it goes. Move-only.
  class Registration {
   public:
    Registration() noexcept = default;
    Registration(Registration&& o) noexcept : reactor_(std::exchange(o.reactor_, nullptr)), token_(o.token_) {}
    Registration& operator=(Registration&& o) noexcept {
      if (this != &o) {
        reset();
        reactor_ = std::exchange(o.reactor_, nullptr);
        token_ = o.token_;
      }
      return *this;
    }
    Registration(const Registration&) = delete;
    Registration& operator=(const Registration&) = delete;
    ~Registration() { reset(); }
    void reset() noexcept;
    explicit operator bool() const noexcept { return reactor_ != nullptr; }

   private:
    friend class Reactor;
    Registration(Reactor* r, std::uint64_t token) noexcept : reactor_(r), token_(token) {}
    Reactor* reactor_ = nullptr;
    std::uint64_t token_ = 0;
  };

  // A deadline; cancelled when it goes (or by cancel()). Move-only. It fires once.
  class Timer {
   public:
    Timer() noexcept = default;
    Timer(Timer&& o) noexcept : reactor_(std::exchange(o.reactor_, nullptr)), id_(o.id_) {}
    Timer& operator=(Timer&& o) noexcept {
      if (this != &o) {
        cancel();
        reactor_ = std::exchange(o.reactor_, nullptr);
        id_ = o.id_;
      }
      return *this;
    }
    Timer(const Timer&) = delete;
    Timer& operator=(const Timer&) = delete;
    ~Timer() { cancel(); }
    void cancel() noexcept;
    // True until it fired or was cancelled.
    bool armed() const noexcept;

   private:
    friend class Reactor;
    Timer(Reactor* r, std::uint64_t id) noexcept : reactor_(r), id_(id) {}
    Reactor* reactor_ = nullptr;
    std::uint64_t id_ = 0;
  };

  Reactor();  // throws std::runtime_error naming epoll_create1 and errno
  Reactor(const Reactor&) = delete;
  Reactor& operator=(const Reactor&) = delete;

  // Calls `on_readable` whenever `fd` is readable, until the Registration goes. Throws
  // std::runtime_error (epoll_ctl, errno) for an fd that cannot be added, or one already added.
  [[nodiscard]] Registration add(int fd, Handler on_readable);
  // Calls `fire` once, at `when` or soon after (never before).
  [[nodiscard]] Timer at(Clock::time_point when, Handler fire);
  // Runs after every turn that handled an event or a timer (metrics, status), in the order added.
  void after_turn(Handler h) { after_turn_.push_back(std::move(h)); }

  // One turn: waits for an event or the next timer, at most `max_wait` (none: as long as it takes),
  // then runs the handlers of what is ready and the timers that are due. Returns how many ran.
  // EINTR is a turn with nothing to do.
  std::size_t run_once(std::optional<Clock::duration> max_wait = std::nullopt);

  std::size_t registrations() const noexcept { return handlers_.size(); }
  std::size_t timers() const noexcept { return timers_.size(); }
  std::optional<Clock::time_point> next_timer() const;

 private:
  struct Entry {
    int fd;
    std::shared_ptr<const Handler> handler;  // shared: a handler that removes itself keeps running
  };
  void remove(std::uint64_t token) noexcept;
  void cancel(std::uint64_t id) noexcept;
  std::size_t run_due_timers();

  UniqueFd epoll_;
  std::uint64_t next_token_ = 1;
  std::unordered_map<std::uint64_t, Entry> handlers_;  // token -> fd and handler
  std::unordered_map<int, std::uint64_t> tokens_;      // fd -> its token
  std::uint64_t next_timer_ = 1;
  std::multimap<Clock::time_point, std::uint64_t> deadlines_;  // soonest first
  std::unordered_map<std::uint64_t, std::pair<std::multimap<Clock::time_point, std::uint64_t>::iterator, Handler>> timers_;
  std::vector<Handler> after_turn_;
};

}  // namespace vod::server::loop
