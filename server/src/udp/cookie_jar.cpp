// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/cookie_jar.hpp"

#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace vod::server::udp {

CookieJar::CookieJar() {
  if (RAND_bytes(secret_.data(), static_cast<int>(secret_.size())) != 1)
    throw std::runtime_error("RAND_bytes for the cookie secret failed (OpenSSL)");
}

proto::Cookie CookieJar::for_window(const sockaddr_storage& peer, std::uint64_t window) const {
  // The message: address family, address, port, window (fixed widths).
  std::vector<std::uint8_t> m;
  m.push_back(static_cast<std::uint8_t>(peer.ss_family));
  if (peer.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(peer);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&a.sin_addr);
    m.insert(m.end(), p, p + sizeof a.sin_addr);
    m.push_back(static_cast<std::uint8_t>(ntohs(a.sin_port) >> 8));
    m.push_back(static_cast<std::uint8_t>(ntohs(a.sin_port)));
  } else if (peer.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(peer);
    const auto* p = reinterpret_cast<const std::uint8_t*>(&a.sin6_addr);
    m.insert(m.end(), p, p + sizeof a.sin6_addr);
    m.push_back(static_cast<std::uint8_t>(ntohs(a.sin6_port) >> 8));
    m.push_back(static_cast<std::uint8_t>(ntohs(a.sin6_port)));
  }
  for (int i = 7; i >= 0; --i) m.push_back(static_cast<std::uint8_t>(window >> (8 * i)));
  std::uint8_t mac[EVP_MAX_MD_SIZE];
  unsigned mac_len = 0;
  if (!HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), m.data(), m.size(), mac, &mac_len) ||
      mac_len < proto::kCookieSize)
    throw std::runtime_error("HMAC-SHA256 of a cookie failed (OpenSSL)");
  proto::Cookie c;
  std::memcpy(c.data(), mac, c.size());
  return c;
}

proto::Cookie CookieJar::make(const sockaddr_storage& peer, std::uint64_t now_s) const { return for_window(peer, now_s / kWindowSeconds); }

bool CookieJar::valid(const proto::Cookie& cookie, const sockaddr_storage& peer, std::uint64_t now_s) const {
  const std::uint64_t window = now_s / kWindowSeconds;
  for (std::uint64_t w : {window, window - 1}) {
    const proto::Cookie want = for_window(peer, w);
    if (CRYPTO_memcmp(want.data(), cookie.data(), cookie.size()) == 0) return true;  // constant time
  }
  return false;
}

}  // namespace vod::server::udp
