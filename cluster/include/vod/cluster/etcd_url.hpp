// SPDX-License-Identifier: LGPL-2.1-or-later
// Where a fleet's membership lives: etcd://HOST[:PORT][/PREFIX] (PORT 2379, PREFIX /rdma-vod), or
// etcds:// for etcd over TLS.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vod::cluster {

inline constexpr std::uint16_t kEtcdPort = 2379;
inline constexpr std::string_view kDefaultPrefix = "/rdma-vod";

class ClusterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// How to reach etcd securely, from every tool's --etcd-* options: TLS for etcds:// (etcd's
// certificate checked against `cacert`, else the system's CAs; `cert` and `key` when etcd asks for
// a client certificate, --client-cert-auth), and etcd's own authentication (`user`, with its
// password in `password_file`, read at each authentication so that it can be rotated).
struct EtcdSecurity {
  std::string cacert, cert, key;
  std::string user, password_file;
  bool operator==(const EtcdSecurity&) const = default;
};

// The tool's --etcd-* options, set once before it parses an etcd URL (every EtcdEndpoint parsed
// afterwards carries them). Throws ClusterError for a file that cannot be read, a certificate
// without its key (or the other way round), or a user without a password file.
void set_etcd_security(EtcdSecurity security);
// The same checks for one endpoint's security (rdmasrc's properties, per element): returns it, or
// throws ClusterError.
EtcdSecurity checked_etcd_security(EtcdSecurity security);
const EtcdSecurity& etcd_security() noexcept;

struct EtcdEndpoint {
  bool tls = false;  // etcds://
  EtcdSecurity security;
  std::string host;
  std::uint16_t port = kEtcdPort;
  std::string prefix{kDefaultPrefix};  // begins with '/', no trailing '/'
  std::string to_string() const;       // etcd://host:port/prefix (etcds:// with TLS)
  std::string members_key() const { return prefix + "/members/"; }
  bool operator==(const EtcdEndpoint&) const = default;
};

// Parses etcd:// or etcds://HOST[:PORT][/PREFIX]; throws ClusterError saying what is wrong.
EtcdEndpoint parse_etcd_url(std::string_view text);
// Checks a prefix (from a URL's path or ?prefix=): '/'-separated words of [A-Za-z0-9._-]; returns
// it with one leading '/' and no trailing one, or throws ClusterError.
std::string checked_prefix(std::string_view prefix);
// HOST[:PORT] or [V6]:PORT; throws ClusterError. `what` names the text in the message.
void parse_host_port(std::string_view text, std::string& host, std::uint16_t& port, std::string_view what);
// The inverse: HOST:PORT, an IPv6 address in brackets. How every program here names a peer.
std::string format_host_port(std::string_view host, std::uint16_t port);

}  // namespace vod::cluster
