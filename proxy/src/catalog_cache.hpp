// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy's copy of the server's catalog: read once before the proxy serves, then re-read in the
// background by a short catalog-only session on a SessionOpener worker once it is older than a
// request allows, and swapped in when the new one lands, so the io_context thread never waits. While
// the server does not answer, the last catalog read keeps serving, and says how stale it is.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "session_opener.hpp"
#include "vod/client/session.hpp"
#include "vod/client/stats.hpp"
#include "vod/client/uri.hpp"

namespace vod::proxy {

class CatalogCache {
 public:
  // `count`: where the catalog sessions' figures go (the pool's totals).
  CatalogCache(const client::Uri& server, const client::SessionOptions& options, SessionOpener& opener,
               std::function<void(const client::Stats&)> count)
      : server_(server), options_(options), opener_(opener), count_(std::move(count)) {}

  // Reads the catalog now, waiting for the server. Throws ClientError when it cannot be reached.
  void read_now();
  // The catalog last read; a fresh read starts on a worker once it is older than `max_age`. Never
  // waits. Throws ClientError when no catalog was ever read.
  const proto::Catalog& get(std::chrono::milliseconds max_age);
  // Why the catalog get() returns is stale, or nullopt while the server answers.
  std::optional<std::string> staleness() const;
  bool ok() const noexcept { return ok_; }  // the last read succeeded

 private:
  const client::Uri& server_;
  const client::SessionOptions& options_;
  SessionOpener& opener_;
  std::function<void(const client::Stats&)> count_;
  std::shared_ptr<const proto::Catalog> catalog_;            // the last read; swapped only between requests
  std::chrono::steady_clock::time_point read_at_, good_at_;  // when the last read started; when one last succeeded
  bool ok_ = false, refreshing_ = false;
  std::string error_ = "the first read of the catalog is under way";
};

}  // namespace vod::proxy
