// SPDX-License-Identifier: LGPL-2.1-or-later
#include "admission.hpp"

#include <algorithm>

#include <cstdio>

#include "auth/client_address.hpp"

namespace vod::server {

namespace {

bool is_live(const proto::CatalogEntry& e) { return (e.flags & proto::kEntryLive) != 0; }

// The names a client could have meant, as far as they fit a reject reason.
std::string names_of(const proto::Catalog& c, bool live) {
  std::string names;
  std::size_t count = 0;
  for (const auto& e : c.entries) {
    if (is_live(e) != live) continue;
    ++count;
    if (names.size() + e.name.size() + 2 > 70) {
      if (names.find("...") == std::string::npos) names += ", ...";
      continue;
    }
    names += (names.empty() ? "" : ", ") + e.name;
  }
  return std::to_string(count) + (live ? " live channels: " : " movies: ") + (names.empty() ? "(none)" : names);
}

Refuse refuse(proto::RejectCode code, std::string reason) { return {code, std::move(reason)}; }

}  // namespace

Admission admit(proto::Bytes private_data, const AdmissionState& s) {
  auto request = proto::decode_connect_request(private_data);
  if (!request) return refuse(proto::reject_code_for(request.error()), request.error().message);
  const auto& entries = s.catalog.entries;
  if (s.over_connect_rate) {
    char rate[32];
    std::snprintf(rate, sizeof rate, "%g", s.connect_rate);
    return refuse(proto::RejectCode::rate_limited, auth::address_text(s.peer) + " connects more than " + rate +
                                                       " times a second, the limit per address; try again in a second");
  }
  Admit a;
  if (request->auth_type == proto::AuthType::token_v1)
    if (auto t = proto::decode_access_token(request->auth_token)) a.token = *t;
  if (s.revoked)
    if (auto why = s.revoked->revoked(a.token, s.peer)) return refuse(proto::RejectCode::unauthorized, *why);
  // The token first: a client without a valid one learns nothing, not even which names exist.
  if (s.auth)
    if (auto why = s.auth->refusal(*request, nullptr, s.now_unix, s.peer)) return refuse(proto::RejectCode::unauthorized, *why);

  // A version-1 client cannot read a version-2 catalog (one that lists a movie of the segment
  // cache), nor a segmented movie: it is told so, whatever it asked for.
  if (request->version < proto::kSegmentsVersion &&
      std::any_of(entries.begin(), entries.end(), [](const proto::CatalogEntry& e) { return (e.flags & proto::kEntrySegmented) != 0; }))
    return refuse(proto::RejectCode::unsupported_version,
                  "this server serves movies from a segment cache, which needs protocol version 2: update the client (libvodclient)");
  // Nor can a client before version 3 read a catalog of names that are paths.
  if (request->version < proto::kPathNamesVersion &&
      std::any_of(entries.begin(), entries.end(), [](const proto::CatalogEntry& e) { return proto::needs_path_names(e.name); }))
    return refuse(proto::RejectCode::unsupported_version,
                  "this library has folders or names over 128 bytes, which need protocol version 3; the client speaks " +
                      std::to_string(request->version) + ": update it");
  // Nor can a client before version 4 read a catalog that lists titles.
  if (request->version < proto::kTitlesVersion && !s.catalog.titles.empty())
    return refuse(proto::RejectCode::unsupported_version,
                  "this library has titles (for adaptive bitrate), which need protocol version 4; the client speaks " +
                      std::to_string(request->version) + ": update it");

  switch (request->kind) {
    case proto::RequestKind::catalog_only: a.kind = Admit::Kind::catalog; break;
    case proto::RequestKind::movie:
    case proto::RequestKind::live: {
      const bool live = request->kind == proto::RequestKind::live;
      const proto::CatalogEntry* e = nullptr;
      if (request->selector_type == proto::SelectorType::catalog_index) {
        if (request->catalog_generation != s.catalog.generation)
          return refuse(proto::RejectCode::stale_catalog, "catalog generation " + std::to_string(request->catalog_generation) +
                                                              " is gone; the current one is " + std::to_string(s.catalog.generation) +
                                                              ": reconnect for the catalog");
        if (request->selector >= entries.size())
          return refuse(proto::RejectCode::unknown_movie, "catalog index " + std::to_string(request->selector) + " is past the " +
                                                              std::to_string(entries.size()) + " entries");
        e = &entries[static_cast<std::size_t>(request->selector)];
      } else {
        e = s.catalog.find_hash(request->selector);
        if (!e)
          return refuse(proto::RejectCode::unknown_movie,
                        std::string(live ? "no such live channel; " : "no such movie; ") + names_of(s.catalog, live));
      }
      if (is_live(*e) != live)
        return refuse(proto::RejectCode::unsupported_kind,
                      "'" + e->name +
                          (live ? "' is a movie, not a live channel: connect for a movie"
                                : "' is a live channel: connect with kind live (rdma://host/live/" + e->name + ")"));
      if (s.auth)  // the token passed every other check above
        if (auto why = auth::TokenAuthority::out_of_scope(*a.token, *e)) return refuse(proto::RejectCode::unauthorized, *why);
      a.kind = live ? Admit::Kind::live : Admit::Kind::movie;
      a.entry = static_cast<std::uint32_t>(e - entries.data());
      break;
    }
    case proto::RequestKind::write_record:
      return refuse(proto::RejectCode::unsupported_kind,
                    "Write-Record is served over UDP (vod-server --udp-port), not over an RDMA connection");
  }
  if (s.draining) return refuse(proto::RejectCode::shutting_down, "the server is shutting down");
  if (s.connections >= s.max_clients)
    return refuse(proto::RejectCode::server_full,
                  std::to_string(s.connections) + " clients connected, the limit is " + std::to_string(s.max_clients) + "; try later");
  if (s.max_per_source && s.from_source >= s.max_per_source)
    return refuse(proto::RejectCode::source_limit, std::to_string(s.from_source) + " connections from " + auth::address_text(s.peer) +
                                                       ", the limit per address is " + std::to_string(s.max_per_source));
  return a;
}

std::string describe(const Admit& a, const proto::Catalog& catalog) {
  switch (a.kind) {
    case Admit::Kind::catalog: return "catalog";
    case Admit::Kind::movie: return "movie '" + catalog.entries.at(a.entry).name + "'";
    case Admit::Kind::live: return "live channel '" + catalog.entries.at(a.entry).name + "'";
  }
  return "?";
}

}  // namespace vod::server
