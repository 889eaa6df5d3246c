// SPDX-License-Identifier: LGPL-2.1-or-later
// What route() (request_router.cpp) and the HLS routes (hls_routes.cpp) share: internal to the
// router, pure like it, and tested through route().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "request_router.hpp"

namespace vod::proxy::routing {

// A movie's body or its range (Range, If-Range, If-Match, If-None-Match answered).
Plan movie(const Request& r, const proto::CatalogEntry& e);
// The value of `key` in the target's query string ("" when absent), percent-decoded; nullopt when
// its encoding is bad.
std::optional<std::string> query_value(const std::string& target, const std::string& key);
// The entry a page, picture or playlist path names (percent-encoded), or an error plan.
std::variant<const proto::CatalogEntry*, Plan> named_entry(const std::string& encoded, const proto::Catalog& catalog);
// A name taken from a path: percent-decoded and checked by the catalog's rule (a movie's path, or
// with `channel` a live channel's flat name), or a 400 plan saying why; `what` names it there.
std::variant<std::string, Plan> decoded_name(const std::string& encoded, const char* what = "name", bool channel = false);
// /hls/...: a movie's playlists and pieces, a live channel's playlist, segments and parts.
Plan hls_request(const Request& r, const std::string& path, const Site& site);

}  // namespace vod::proxy::routing
