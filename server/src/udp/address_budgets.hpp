// SPDX-License-Identifier: LGPL-2.1-or-later
// Who a Write-Record client is, for the server's limits, and what an address may cost the server
// before it has proven that it receives at that address (docs/write-record.md, "Limits").
//
// A client is its address, not its address and port: a host gets new ports for free, so limits per
// port are no limits. IPv4 addresses count one by one; IPv6 addresses by their /64, the smallest
// block a network hands one host (SLAAC), so a host that draws addresses from its /64 is still one
// client. An IPv4-mapped IPv6 address (::ffff:a.b.c.d, a dual-stack socket) is its IPv4 address.
//
// Before its cookie verifies, an address touches only the PreCookieTable: the hello and error
// budgets of a fixed array of slots, indexed by a keyed hash (SipHash-2-4) of the address. A flood
// from any number of forged sources allocates nothing and grows nothing; the key is drawn at start
// and never leaves the process, so nobody can aim a collision at a chosen victim. Addresses that
// share a slot share its budgets.
#pragma once

#include <netinet/in.h>
#include <openssl/rand.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace vod::server::udp {

using HashKey = std::array<std::uint8_t, 16>;

// SipHash-2-4 (Aumasson and Bernstein, 2012) of `n` bytes: a keyed hash whose outputs say nothing
// about the key, so an attacker cannot choose inputs that collide. Written here rather than taken
// from libcrypto (OpenSSL 3's EVP_MAC "SIPHASH"): that needs a fetched MAC and a context set up per
// call, an allocation and a dozen indirect calls for every datagram of a flood, where this is a few
// dozen arithmetic instructions; the reference vectors are checked in udp_limits_test.cpp.
inline std::uint64_t siphash24(const HashKey& key, const std::uint8_t* in, std::size_t n) noexcept {
  auto load = [](const std::uint8_t* p) {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= static_cast<std::uint64_t>(p[i]) << (8 * i);
    return v;
  };
  const std::uint64_t k0 = load(key.data()), k1 = load(key.data() + 8);
  std::uint64_t v0 = 0x736f6d6570736575ull ^ k0, v1 = 0x646f72616e646f6dull ^ k1;
  std::uint64_t v2 = 0x6c7967656e657261ull ^ k0, v3 = 0x7465646279746573ull ^ k1;
  auto round = [&] {
    v0 += v1, v1 = std::rotl(v1, 13), v1 ^= v0, v0 = std::rotl(v0, 32);
    v2 += v3, v3 = std::rotl(v3, 16), v3 ^= v2;
    v0 += v3, v3 = std::rotl(v3, 21), v3 ^= v0;
    v2 += v1, v1 = std::rotl(v1, 17), v1 ^= v2, v2 = std::rotl(v2, 32);
  };
  const std::size_t whole = n - n % 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    const std::uint64_t m = load(in + i);
    v3 ^= m;
    round(), round();
    v0 ^= m;
  }
  std::uint64_t last = static_cast<std::uint64_t>(n) << 56;
  for (std::size_t i = 0; i < n % 8; ++i) last |= static_cast<std::uint64_t>(in[whole + i]) << (8 * i);
  v3 ^= last;
  round(), round();
  v0 ^= last;
  v2 ^= 0xff;
  round(), round(), round(), round();
  return v0 ^ v1 ^ v2 ^ v3;
}

// A key for siphash24 from OpenSSL's RAND_bytes (the CSPRNG the token nonces and cookie secrets
// come from too); throws std::runtime_error when it has none.
inline HashKey random_hash_key() {
  HashKey k{};
  if (RAND_bytes(k.data(), static_cast<int>(k.size())) != 1)
    throw std::runtime_error("RAND_bytes for the UDP address hash key failed (OpenSSL)");
  return k;
}

// A client address as the limits see it: an IPv4 address, or an IPv6 /64.
struct AddressKey {
  std::uint64_t prefix = 0;  // IPv4: the address (host order); IPv6: the first 64 bits (big-endian order)
  std::uint8_t family = 0;   // AF_INET, AF_INET6, or 0 (neither: all such share one key)
  bool operator==(const AddressKey&) const = default;
};

inline AddressKey address_key(const sockaddr_storage& a) noexcept {
  auto be = [](const std::uint8_t* p, int bytes) {
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v = v << 8 | p[i];
    return v;
  };
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    return {be(reinterpret_cast<const std::uint8_t*>(&v4.sin_addr), 4), AF_INET};
  }
  if (a.ss_family == AF_INET6) {
    const auto* b = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr.s6_addr;
    static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(b, kMapped, sizeof kMapped) == 0) return {be(b + 12, 4), AF_INET};
    return {be(b, 8), AF_INET6};
  }
  return {};
}

// "192.0.2.7" or "2001:db8:1:2::/64", for logs.
inline std::string to_string(const AddressKey& k) {
  if (k.family == AF_INET)
    return std::to_string(k.prefix >> 24 & 255) + "." + std::to_string(k.prefix >> 16 & 255) + "." + std::to_string(k.prefix >> 8 & 255) +
           "." + std::to_string(k.prefix & 255);
  if (k.family == AF_INET6) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string s;
    for (int group = 3; group >= 0; --group) {
      const unsigned v = static_cast<unsigned>(k.prefix >> (16 * group) & 0xffff);
      std::string g;
      for (unsigned x = v;; x >>= 4) {
        g.insert(g.begin(), kHex[x & 15]);
        if (x < 16) break;
      }
      s += g + ":";
    }
    return s + ":/64";
  }
  return "(not IP)";
}

// For unordered containers of addresses: keyed, so their buckets cannot be flooded on purpose.
struct AddressHasher {
  HashKey key{};
  std::size_t operator()(const AddressKey& k) const noexcept {
    std::uint8_t bytes[9];
    for (int i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(k.prefix >> (8 * i));
    bytes[8] = k.family;
    return static_cast<std::size_t>(siphash24(key, bytes, sizeof bytes));
  }
};

// The hello and error budgets of addresses that proved nothing yet (and of errors to any address):
// token buckets in a fixed array of slots, refilled on use. Memory is slots() × 16 bytes, whatever
// arrives.
class PreCookieTable {
 public:
  using Clock = std::chrono::steady_clock;
  struct Limits {
    float hellos_per_second = 64, hello_burst = 256;  // cookies: 48 bytes each, in answer to 64
    float errors_per_second = 20, error_burst = 20;   // errors: never larger than the request they answer
  };

  // `slots`: rounded up to a power of two, at least 1.
  PreCookieTable(std::size_t slots, const HashKey& key, const Limits& limits, Clock::time_point now)
      : hasher_{key},
        limits_(limits),
        epoch_(now),
        slots_(std::bit_ceil(std::max<std::size_t>(slots, 1)), Slot{limits.hello_burst, limits.error_burst, 0}) {}

  // Takes one cookie (one error) from the address's slot; false when its budget is spent.
  bool take_hello(const AddressKey& a, Clock::time_point now) { return take(a, now, &Slot::hellos); }
  bool take_error(const AddressKey& a, Clock::time_point now) { return take(a, now, &Slot::errors); }

  std::size_t slot_of(const AddressKey& a) const noexcept { return hasher_(a) & (slots_.size() - 1); }
  std::size_t slots() const noexcept { return slots_.size(); }

 private:
  struct Slot {
    float hellos, errors;
    std::int64_t ms;  // when last refilled, in ms since epoch_
  };
  static_assert(sizeof(Slot) == 16);

  bool take(const AddressKey& a, Clock::time_point now, float Slot::*budget) {
    Slot& s = slots_[slot_of(a)];
    const std::int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - epoch_).count();
    if (ms > s.ms) {
      const float seconds = static_cast<float>(ms - s.ms) / 1000;
      s.hellos = std::min(limits_.hello_burst, s.hellos + seconds * limits_.hellos_per_second);
      s.errors = std::min(limits_.error_burst, s.errors + seconds * limits_.errors_per_second);
      s.ms = ms;
    }
    if (s.*budget < 1) return false;
    s.*budget -= 1;
    return true;
  }

  AddressHasher hasher_;
  Limits limits_;
  Clock::time_point epoch_;
  std::vector<Slot> slots_;  // allocated once, here
};

}  // namespace vod::server::udp
