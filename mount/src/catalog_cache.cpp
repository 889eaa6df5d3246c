// SPDX-License-Identifier: LGPL-2.1-or-later
#include "catalog_cache.hpp"

#include "vod/client/fleet.hpp"
#include "vod/log.hpp"

namespace vod::mount {

CatalogCache::CatalogCache(client::Uri server, client::SessionOptions options, std::chrono::milliseconds refresh)
    : server_(std::move(server)), options_(std::move(options)), refresh_(refresh) {
  server_.movie.reset();
  server_.live = false;
}

void CatalogCache::read_now() {
  auto catalog_options = options_;
  catalog_options.reconnect.give_up_after = std::chrono::milliseconds(0);  // a refresh that fails keeps the old catalog
  auto next = std::make_shared<CatalogSnapshot>();
  if (server_.cluster) {  // a fleet: every member's, merged
    next->catalog = client::read_fleet_catalog(server_, catalog_options);
  } else {
    client::Session session(server_, catalog_options);
    next->catalog = session.catalog();
  }
  next->tree.emplace(next->catalog);
  next->seen = current_ && current_->catalog.generation == next->catalog.generation ? current_->seen : std::time(nullptr);
  if (current_ && current_->catalog.generation != next->catalog.generation)
    log::info("mount", "catalog generation " + std::to_string(current_->catalog.generation) + " -> " +
                           std::to_string(next->catalog.generation) + ", " + std::to_string(next->catalog.entries.size()) + " movies");
  current_ = std::move(next);
  read_at_ = std::chrono::steady_clock::now();
}

void CatalogCache::load() {
  std::lock_guard lock(mutex_);
  read_now();
}

std::shared_ptr<const CatalogSnapshot> CatalogCache::get() {
  std::lock_guard lock(mutex_);
  if (std::chrono::steady_clock::now() - read_at_ >= refresh_) {
    try {
      read_now();
      if (warned_) log::info("mount", "catalog of " + server_.to_string() + " readable again");
      warned_ = false;
    } catch (const std::exception& e) {
      // Keep the last catalog, and do not retry on every stat(): once per refresh interval.
      read_at_ = std::chrono::steady_clock::now();
      if (!warned_) log::warn("mount", std::string("catalog refresh failed, listing the last one read: ") + e.what());
      warned_ = true;
    }
  }
  return current_;
}

}  // namespace vod::mount
