// SPDX-License-Identifier: LGPL-2.1-or-later
// Which names a request's Host may give: DNS-rebinding protection. A web page at attacker.example
// can make its own name resolve to 127.0.0.1; the browser then sends the page's requests, with
// "Host: attacker.example", to the proxy and lets the page read the answers (same origin). The
// proxy answers only the names it is reached by: the loopback names, the listen address (with a
// wildcard listen, the host's addresses and hostname too) and --allow-host NAME. The decision is a
// pure function of the request and the list, table-tested in tests/unit/proxy_http_test.cpp.
#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "request_router.hpp"

namespace vod::proxy {

// The host part of a Host field (or of an --allow-host value): `name[:port]`, `a.b.c.d[:port]` or
// `[v6][:port]`. Returned lowercased, without the port and one trailing dot; IP addresses in their
// canonical text, IPv6 in brackets ("[::1]"). nullopt when it is not a valid uri-host[:port].
std::optional<std::string> host_name_of(std::string_view field);

class HostAllowList {
 public:
  // The loopback names: localhost, 127.0.0.0/8, [::1] (any port).
  HostAllowList();
  // Adds a name, an IP address or [IPv6] (a port, if given, is ignored: every port is allowed).
  // Throws std::invalid_argument when `name` is not a host.
  void allow(std::string_view name);
  // `host` as host_name_of() returns it.
  bool allows(const std::string& host) const;
  const std::set<std::string>& names() const noexcept { return names_; }

 private:
  std::set<std::string> names_;
};

// The names a proxy listening on `listen_address` answers to: the loopback names, that address,
// and, when it is a wildcard (0.0.0.0 or ::), `host_addresses` and `hostname` as well; then
// `extra` (--allow-host). Throws std::invalid_argument naming a bad --allow-host value.
HostAllowList allowed_hosts_for(const std::string& listen_address, const std::vector<std::string>& extra,
                                const std::vector<std::string>& host_addresses, const std::string& hostname);

enum class HostVerdict {
  allowed,
  missing,      // HTTP/1.1 without Host (HTTP/1.0 may leave it out: the default host is used)
  repeated,     // more than one Host line
  malformed,    // not a uri-host[:port]
  not_allowed,  // a name this proxy is not reached by
};

// The decision for one request: its HTTP version (10, 11), how many Host lines it had, and the
// value of the first.
HostVerdict check_host(unsigned http_version, std::size_t host_lines, std::string_view host, const HostAllowList& allowed);

// The answer to a request whose verdict is not `allowed`: 400 for a missing, repeated or malformed
// Host, 421 for a name not allowed, each saying what to do.
Plan host_refusal(HostVerdict verdict, std::string_view host);

// Why ORIGIN cannot be a --cors-origin (it must be scheme://host[:port] of http or https, as a
// browser sends it in Origin), or nullptr when it can.
const char* invalid_cors_origin(const std::string& origin);

}  // namespace vod::proxy
