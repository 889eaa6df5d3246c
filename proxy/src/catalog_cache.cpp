// SPDX-License-Identifier: LGPL-2.1-or-later
#include "catalog_cache.hpp"

#include <algorithm>

#include "vod/client/errors.hpp"
#include "vod/client/fleet.hpp"
#include "vod/log.hpp"

namespace vod::proxy {

namespace {
constexpr auto kCatalogAnswerWithin = std::chrono::seconds(2);  // a catalog read slower than this marks the catalog stale
}  // namespace

void CatalogCache::read_now() {
  try {
    if (server_.cluster) {  // every member's, merged
      catalog_ = std::make_shared<const proto::Catalog>(client::read_fleet_catalog(server_, options_));
    } else {
      client::Session session(server_, options_);
      catalog_ = std::make_shared<const proto::Catalog>(session.catalog());
      count_(session.stats());
    }
    read_at_ = good_at_ = std::chrono::steady_clock::now();
    ok_ = true;
  } catch (const std::exception& e) {
    ok_ = false;
    error_ = e.what();
    throw;
  }
}

const proto::Catalog& CatalogCache::get(std::chrono::milliseconds max_age) {
  const auto now = std::chrono::steady_clock::now();
  if (!refreshing_ && (!catalog_ || now - read_at_ > max_age)) {
    // A new connection sees the newest catalog generation; until it has, the last one serves.
    refreshing_ = true;
    read_at_ = now;
    opener_.read_catalog(
        server_, options_, [this](std::shared_ptr<const proto::Catalog> catalog, const std::string& error, const client::Stats& stats) {
          refreshing_ = false;
          if (!catalog) {
            if (ok_) log::warn("proxy", "cannot re-read the catalog of " + server_.to_string() + ", serving the one read before: " + error);
            ok_ = false;
            error_ = error;
            return;
          }
          catalog_ = std::move(catalog);
          ok_ = true;
          good_at_ = std::chrono::steady_clock::now();
          count_(stats);
        });
  }
  if (!catalog_) throw client::ClientError(client::ErrorKind::server_unreachable, error_);
  return *catalog_;
}

std::optional<std::string> CatalogCache::staleness() const {
  if (!catalog_) return std::nullopt;
  const auto now = std::chrono::steady_clock::now();
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - good_at_).count();
  std::string why;
  if (!ok_) why = "did not answer the last catalog read (" + error_ + ")";
  else if (refreshing_ && now - read_at_ > kCatalogAnswerWithin)
    why = "has not answered the catalog read started " +
          std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - read_at_).count()) + " s ago";
  else return std::nullopt;
  std::string text = "the vod-server at " + server_.to_string() + " " + why + "; this catalog was read " + std::to_string(age) + " s ago";
  std::replace_if(
      text.begin(), text.end(), [](char c) { return c == '\r' || c == '\n'; }, ' ');  // a header value
  return text;
}

}  // namespace vod::proxy
