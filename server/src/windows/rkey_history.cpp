// SPDX-License-Identifier: LGPL-2.1-or-later
#include "rkey_history.hpp"

#include <infiniband/verbs.h>

namespace vod::server::windows {

std::uint32_t RkeyHistory::next(std::uint32_t window_rkey) {
  std::uint32_t rkey = ibv_inc_rkey(window_rkey);
  // 256 keys per window index: when every one was handed out lately, the oldest-stepped one is used.
  for (int tries = 1; tries < 256 && seen(rkey); ++tries) rkey = ibv_inc_rkey(rkey);
  remember(rkey);
  return rkey;
}

void RkeyHistory::remember(std::uint32_t rkey) {
  if (!recent_.insert(rkey).second) return;
  order_.push_back(rkey);
  if (order_.size() > capacity_) {
    recent_.erase(order_.front());
    order_.pop_front();
  }
}

}  // namespace vod::server::windows
