// SPDX-License-Identifier: LGPL-2.1-or-later
// The cap on HTTP connections (--max-connections): a connection holds a Slot for its lifetime, and
// a connection accepted when none is free is refused. The count lives in shared state, so a Slot
// stays valid however the objects are torn down. Plus the rate limit of the refusal's log line.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace vod::proxy {

class ConnectionSlots {
  struct Count {
    std::size_t in_use = 0;
  };

 public:
  // Held by one connection; gives its place back when destroyed.
  class Slot {
   public:
    Slot(Slot&& other) noexcept : count_(std::move(other.count_)) {}
    Slot& operator=(Slot&& other) noexcept {
      if (this != &other) {
        release();
        count_ = std::move(other.count_);
      }
      return *this;
    }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() { release(); }

   private:
    friend class ConnectionSlots;
    explicit Slot(std::shared_ptr<Count> count) : count_(std::move(count)) { ++count_->in_use; }
    void release() noexcept {
      if (count_) --count_->in_use;
      count_.reset();
    }
    std::shared_ptr<Count> count_;
  };

  explicit ConnectionSlots(std::size_t max) : max_(max), count_(std::make_shared<Count>()) {}

  // A slot, or nullopt when `max` connections hold one.
  std::optional<Slot> try_take() {
    if (count_->in_use >= max_) return std::nullopt;
    return Slot(count_);
  }
  std::size_t in_use() const noexcept { return count_->in_use; }
  std::size_t max() const noexcept { return max_; }

 private:
  std::size_t max_;
  std::shared_ptr<Count> count_;
};

// At most one log line per `interval` about a repeated event: note() counts the event and returns
// how many happened since the last line (this one included) when a line is due now.
class RateLimitedCount {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateLimitedCount(Clock::duration interval) : interval_(interval) {}

  std::optional<std::uint64_t> note(Clock::time_point now) {
    ++pending_;
    if (logged_ && now - *logged_ < interval_) return std::nullopt;
    logged_ = now;
    const std::uint64_t n = pending_;
    pending_ = 0;
    return n;
  }

 private:
  Clock::duration interval_;
  std::optional<Clock::time_point> logged_;
  std::uint64_t pending_ = 0;
};

}  // namespace vod::proxy
