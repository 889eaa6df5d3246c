// SPDX-License-Identifier: LGPL-2.1-or-later
// rdma://host[:port][/movie][?token=HEX] and rdma://host[:port]/live/channel[?token=HEX]: what every
// rdma-vod client takes to name a server and a movie or a live channel. A movie is named by its path
// in the server's library, each folder and file name percent-encoded and '/' between them
// (rdma://host/Films/L%C3%A4der%20(2024)/L%C3%A4der%20(2024).mp4; %2F decodes to '/' too). "live"
// and "hls" are never top-level folders of a library, and channel names hold no '/', so
// "live/NAME" is unambiguous. The token is an access token (vod-token) for a server that runs with
// --auth-secret; it is a bearer secret, so to_string() leaves it out (URIs appear in logs).
//
// rdma+etcd://ETCD-HOST[:2379]/movie[?prefix=P&k=N&token=HEX] names a fleet instead of a server
// (docs/operations.md, "A fleet"): the members registered in etcd under P (default /rdma-vod), over
// which the movie is placed by rendezvous hashing; k spreads every movie over its top N servers.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "vod/cluster/etcd_url.hpp"
#include "vod/defaults.hpp"
#include "vod/protocol/private_data.hpp"

namespace vod::client {

inline constexpr std::uint16_t kDefaultPort = defaults::kRdmaPort;

// A fleet: where its members are listed, and how a client places movies over them.
struct ClusterRef {
  cluster::EtcdEndpoint etcd;
  unsigned spread = 0;  // ?k=N: every movie on its top N servers; 0: what the member records say (1 unless spread)
  // ?epsilon=E: bounded loads (cluster/placement.hpp), a member is skipped while its sessions are
  // above (1 + E) x its share of the fleet's; 0: no bound. 0.15, below the 0.25 a fleet aims at,
  // because the records a client reads are up to a second old.
  double load_epsilon = kDefaultLoadEpsilon;
  static constexpr double kDefaultLoadEpsilon = 0.15;
  // ?failover-ms=MS: a member is left when nothing completed for MS (or 4 x the Read latency), or its
  // heartbeat stood still for MS while a read waited for it (ReadEngine::watch_server); 0: not
  // watched, only a fetch stuck for 15 s is.
  unsigned failover_ms = kDefaultFailoverMs;
  static constexpr unsigned kDefaultFailoverMs = 1000;
  bool operator==(const ClusterRef&) const = default;
};

struct Uri {
  std::string host;  // a name, an IPv4 address, or an IPv6 address without brackets
  std::uint16_t port = kDefaultPort;
  std::optional<std::string> movie;                     // percent-decoded; absent for catalog-only URIs
  bool live = false;                                    // `movie` names a live channel (the path was /live/NAME)
  std::optional<std::array<std::uint8_t, 32>> token{};  // ?token=: sent in every connect request
  // rdma+etcd://: a fleet; host and port are then those of the member the session is on.
  std::optional<ClusterRef> cluster{};

  std::string to_string() const;  // canonical form, the movie percent-encoded, without the token
  bool operator==(const Uri&) const = default;
};

class UriError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Throws UriError saying what is wrong and what a valid URI looks like.
Uri parse_uri(std::string_view text);

// What names a server or a fleet to a program that lists or serves all of it (vod-proxy --server,
// vod-mount's first argument): rdma://host[:port], rdma+etcd://etcd-host[:port][?prefix=P], or a
// fleet's etcd URL etcd://HOST[:PORT][/PREFIX]. Throws UriError.
Uri parse_server_uri(std::string_view text);

// Puts the URI's access token, if it has one, into a connect request.
void add_token(proto::ConnectRequest& request, const Uri& uri);

// When the URI's access token has expired by `now_unix` (Unix seconds): a message that says so and
// what to do. A server disconnects a connection whose token expires (docs/security.md), and a new
// connect with the same token would only be refused: sessions check this before reconnecting and
// give up with ErrorKind::unauthorized instead. nullopt without a token, or before its expiry.
std::optional<std::string> expired_token(const Uri& uri, std::uint64_t now_unix);

// Percent-decodes a URI path segment; nullopt when a '%' is not followed by two hex digits.
std::optional<std::string> percent_decode(std::string_view text);

// Percent-encodes a name for one URI path segment (RFC 3986 unreserved characters stay as they
// are; '/' becomes %2F).
std::string percent_encode(std::string_view name);
// Percent-encodes a movie's path for a URI: each folder and file name as percent_encode does, '/'
// between them as it is.
std::string percent_encode_path(std::string_view name);

}  // namespace vod::client
