// SPDX-License-Identifier: LGPL-2.1-or-later
// Where a fleet's membership lives: etcd://HOST[:PORT][/PREFIX] (PORT 2379, PREFIX /rdma-vod).
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

struct EtcdEndpoint {
  std::string host;
  std::uint16_t port = kEtcdPort;
  std::string prefix{kDefaultPrefix};  // begins with '/', no trailing '/'
  std::string to_string() const;       // etcd://host:port/prefix
  std::string members_key() const { return prefix + "/members/"; }
  bool operator==(const EtcdEndpoint&) const = default;
};

// Parses etcd://HOST[:PORT][/PREFIX]; throws ClusterError saying what is wrong.
EtcdEndpoint parse_etcd_url(std::string_view text);
// Checks a prefix (from a URL's path or ?prefix=): '/'-separated words of [A-Za-z0-9._-]; returns
// it with one leading '/' and no trailing one, or throws ClusterError.
std::string checked_prefix(std::string_view prefix);
// HOST[:PORT] or [V6]:PORT; throws ClusterError. `what` names the text in the message.
void parse_host_port(std::string_view text, std::string& host, std::uint16_t& port, std::string_view what);

}  // namespace vod::cluster
