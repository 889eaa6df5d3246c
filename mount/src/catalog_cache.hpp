// SPDX-License-Identifier: LGPL-2.1-or-later
// The mount's view of the server's catalog: what the directory lists and what stat() says. Read
// through a catalog-only connection and trusted for `refresh`; a new connection sees the newest
// generation (a server rescan on SIGHUP). When the server cannot be reached, the last catalog stays
// in use, so a listing never goes empty because of a network glitch.
#pragma once

#include <chrono>
#include <ctime>
#include <memory>
#include <mutex>
#include <optional>

#include "vod/client/catalog_tree.hpp"
#include "vod/client/session.hpp"

namespace vod::mount {

struct CatalogSnapshot {
  proto::Catalog catalog;
  std::time_t seen = 0;                     // when this generation was first seen: the files' mtime
  std::optional<client::CatalogTree> tree;  // its folders, made with it
};

class CatalogCache {
 public:
  CatalogCache(client::Uri server, client::SessionOptions options, std::chrono::milliseconds refresh);

  // Connects and reads the catalog now: what vod-mount does before mounting, so that a wrong
  // address or a missing device is an error at mount time. Throws ClientError.
  void load();
  // The catalog, read again when older than `refresh`. Never throws once load() succeeded.
  std::shared_ptr<const CatalogSnapshot> get();

 private:
  void read_now();

  client::Uri server_;
  client::SessionOptions options_;
  std::chrono::milliseconds refresh_;
  std::mutex mutex_;
  std::shared_ptr<const CatalogSnapshot> current_;
  std::chrono::steady_clock::time_point read_at_;
  bool warned_ = false;  // the last refresh failed and said so
};

}  // namespace vod::mount
