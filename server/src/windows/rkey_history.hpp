// SPDX-License-Identifier: LGPL-2.1-or-later
// The rkeys this server handed out for memory windows lately, so that a new window never carries an
// rkey a client saw before: a type-2 window's rkey is its index (which the device may reuse once a
// window is freed) and an 8-bit key the binder chooses. A client that kept the rkey of its last
// connection must not find it valid on its next one. Bounded: the oldest are forgotten first.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <unordered_set>

namespace vod::server::windows {

class RkeyHistory {
 public:
  explicit RkeyHistory(std::size_t capacity = 65536) : capacity_(capacity) {}
  // The rkey to bind a window with: the window's current rkey with its key byte stepped
  // (ibv_inc_rkey) until the result was not handed out lately; recorded as handed out.
  std::uint32_t next(std::uint32_t window_rkey);
  bool seen(std::uint32_t rkey) const { return recent_.count(rkey) != 0; }
  std::size_t size() const noexcept { return order_.size(); }

 private:
  void remember(std::uint32_t rkey);
  std::size_t capacity_;
  std::deque<std::uint32_t> order_;
  std::unordered_set<std::uint32_t> recent_;
};

}  // namespace vod::server::windows
