// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/rdma/startup_trace.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace vod::rdma::startup_trace {

namespace {

using Clock = std::chrono::steady_clock;

struct Mark {
  Clock::time_point at;
  std::string step;
};

class Trace {
 public:
  Trace() { marks_.reserve(32); }
  ~Trace() { print(); }  // a process that never served a request still says how far it got

  void add(std::string_view step, bool last) noexcept {
    const auto now = Clock::now();
    std::lock_guard<std::mutex> guard(lock_);
    if (finished_ && (last || after_finish_ >= kAfterFinish)) return;
    if (finished_) ++after_finish_;
    try {
      marks_.push_back({now, std::string(step)});
    } catch (...) {
      return;  // out of memory: the trace is only a diagnostic
    }
    if (!first_) first_ = before_ = now;
    if (last) {
      print_locked();
      finished_ = true;
    }
  }

 private:
  // Marks kept after finish() (printed at exit): what the first open did right after it served
  // its first request, bounded so that a long-running process does not collect them for ever.
  static constexpr unsigned kAfterFinish = 12;

  void print() noexcept {
    std::lock_guard<std::mutex> guard(lock_);
    print_locked();
    finished_ = true;
    after_finish_ = kAfterFinish;
  }

  void print_locked() noexcept {
    if (marks_.empty()) return;
    std::string out;
    try {
      const long pid = static_cast<long>(getpid());
      for (const Mark& m : marks_) {
        const auto since_first = std::chrono::duration_cast<std::chrono::microseconds>(m.at - *first_).count();
        const auto since_last = std::chrono::duration_cast<std::chrono::microseconds>(m.at - before_).count();
        before_ = m.at;
        char head[96];
        std::snprintf(head, sizeof head, "vod-startup[%ld]: +%8lld us  (+%7lld) ", pid, static_cast<long long>(since_first),
                      static_cast<long long>(since_last));
        out += head;
        out += m.step;
        out += '\n';
      }
    } catch (...) {
      return;
    }
    marks_.clear();
    // One write, so that the lines of two traced processes sharing stderr do not interleave.
    for (std::size_t done = 0; done < out.size();) {
      const ssize_t n = ::write(STDERR_FILENO, out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<std::size_t>(n);
    }
  }

  std::mutex lock_;
  std::vector<Mark> marks_;
  std::optional<Clock::time_point> first_;  // of the first mark: every line's origin
  Clock::time_point before_;                // of the mark printed last
  bool finished_ = false;
  unsigned after_finish_ = 0;
};

Trace& trace() {
  static Trace t;
  return t;
}

}  // namespace

bool enabled() noexcept {
  static const bool on = [] {
    const char* v = std::getenv("VOD_STARTUP_TRACE");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return on;
}

void mark(std::string_view step) noexcept {
  if (enabled()) trace().add(step, false);
}

void finish(std::string_view step) noexcept {
  if (enabled()) trace().add(step, true);
}

}  // namespace vod::rdma::startup_trace
