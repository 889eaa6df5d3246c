// SPDX-License-Identifier: LGPL-2.1-or-later
// Stateless return-routability cookies for Write-Record (as DTLS and QUIC do it): a client proves it
// receives at its address by echoing a cookie the server sent there. The cookie is an HMAC-SHA256
// (OpenSSL's libcrypto) of the client's address and port and a time window, keyed by a secret that
// never leaves the process; so the server keeps no state per client, and a cookie is good for the
// window it was made in and the next (60 to 120 s).
#pragma once

#include <sys/socket.h>

#include <array>
#include <cstdint>

#include "vod/protocol/write_record.hpp"

namespace vod::server::udp {

class CookieJar {
 public:
  static constexpr std::uint32_t kWindowSeconds = 60;

  CookieJar();  // a fresh random secret (RAND_bytes)
  explicit CookieJar(const std::array<std::uint8_t, 32>& secret) : secret_(secret) {}

  // `now_s`: seconds of any monotonic clock the jar is always given.
  proto::Cookie make(const sockaddr_storage& peer, std::uint64_t now_s) const;
  bool valid(const proto::Cookie& cookie, const sockaddr_storage& peer, std::uint64_t now_s) const;

 private:
  proto::Cookie for_window(const sockaddr_storage& peer, std::uint64_t window) const;
  std::array<std::uint8_t, 32> secret_{};
};

}  // namespace vod::server::udp
