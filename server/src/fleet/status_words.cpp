// SPDX-License-Identifier: LGPL-2.1-or-later
#include "fleet/status_words.hpp"

#include <algorithm>

namespace vod::server::fleet {

void StatusWords::watch(std::span<std::uint8_t> catalog, std::weak_ptr<const void> owner) {
  proto::write_server_status(catalog, status_);
  watched_.push_back({catalog, std::move(owner)});
}

void StatusWords::tick() {
  if (++status_.heartbeat == 0) status_.heartbeat = 1;
  write_all();
}

void StatusWords::set_draining() {
  status_.draining = true;
  write_all();
}

void StatusWords::write_all() {
  // A catalog whose owner went is no longer read by anyone (its last connection held it).
  std::erase_if(watched_, [](const Watched& w) { return w.owner.expired(); });
  for (const Watched& w : watched_) proto::write_server_status(w.bytes, status_);
}

}  // namespace vod::server::fleet
