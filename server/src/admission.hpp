// SPDX-License-Identifier: LGPL-2.1-or-later
// Which connect request gets which descriptors, or which reject: a pure function of the request and
// the server's state, so that every rule is unit-tested without a NIC (as the proxy's route() is).
// The transports then act on the decision: the VoD path accepts with the movie's regions, the live
// module with the channel's ring and header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "auth/revocation_list.hpp"
#include "auth/token_authority.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/private_data.hpp"

namespace vod::server {

struct AdmissionState {
  const proto::Catalog& catalog;  // what new connections get (the current generation)
  std::size_t connections = 0;    // connected clients of every kind
  std::size_t max_clients = 0;
  bool draining = false;  // after SIGTERM
  // With --auth-secret: every request needs a token that passes `auth` (null: no authorization).
  const auth::TokenAuthority* auth = nullptr;
  std::uint64_t now_unix = 0;
  proto::TokenAddress peer{};                     // the client's address (bound tokens, revocation, per-source limits)
  const auth::RevocationList* revoked = nullptr;  // --revoked: cut-off keys, tokens and clients
  // Per-source limits (auth::SourceLimits decides the rate; 0 limits are off).
  bool over_connect_rate = false;
  double connect_rate = 0;   // connects per second allowed per address, for the reason
  unsigned from_source = 0;  // connections from `peer` now
  unsigned max_per_source = 0;
};

struct Admit {
  enum class Kind { catalog, movie, live } kind = Kind::catalog;
  std::uint32_t entry = proto::kNoMovie;      // catalog entry of the movie or channel
  std::optional<proto::AccessToken> token{};  // the request's token, when it carried one (verified when auth is on)
  bool operator==(const Admit&) const = default;
};

struct Refuse {
  proto::RejectCode code = proto::RejectCode::malformed_request;
  std::string reason;  // for people; the reject carries at most kRejectReasonMax bytes of it
};

using Admission = std::variant<Admit, Refuse>;

// `private_data` is the connect request as it arrived (undecoded). The checks run in this order:
// decoding, the connect rate of the address, revocation, the token, the selector, the token's
// scope, draining, the global client limit, the address's connection limit.
Admission admit(proto::Bytes private_data, const AdmissionState& state);

// "movie 'x'", "live channel 'x'" or "catalog", for logs.
std::string describe(const Admit& a, const proto::Catalog& catalog);

}  // namespace vod::server
