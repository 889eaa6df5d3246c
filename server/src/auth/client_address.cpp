// SPDX-License-Identifier: LGPL-2.1-or-later
#include "auth/client_address.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

namespace vod::server::auth {

namespace {

constexpr std::uint8_t kMappedPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

proto::TokenAddress mapped(const in_addr& v4) {
  proto::TokenAddress a{};
  std::copy(std::begin(kMappedPrefix), std::end(kMappedPrefix), a.begin());
  std::memcpy(a.data() + 12, &v4, 4);
  return a;
}

proto::TokenAddress from_v6(const in6_addr& v6) {
  proto::TokenAddress a{};
  std::memcpy(a.data(), &v6, 16);
  return a;
}

}  // namespace

std::optional<proto::TokenAddress> parse_address(const std::string& text) {
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return mapped(v4);
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return from_v6(v6);
  return std::nullopt;
}

proto::TokenAddress address_of(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) return mapped(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr);
  if (sa->sa_family == AF_INET6) return from_v6(reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
  return {};
}

std::string address_text(const proto::TokenAddress& a) {
  char buf[INET6_ADDRSTRLEN] = "?";
  if (std::equal(std::begin(kMappedPrefix), std::end(kMappedPrefix), a.begin())) inet_ntop(AF_INET, a.data() + 12, buf, sizeof buf);
  else inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
  return buf;
}

}  // namespace vod::server::auth
