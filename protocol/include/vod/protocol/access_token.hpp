// SPDX-License-Identifier: LGPL-2.1-or-later
// The access token a client presents in the connect request's auth field (auth_type token_v1) when
// the server runs with --auth-secret. 32 bytes: what it grants, until when, under which key, and a
// truncated HMAC-SHA256 over all of that (and the client's address, when bound to one). A bound
// token also carries a 32-bit hint of that address, so that a server can tell "made for another
// address" from "forged" when the MAC fails; an unbound one carries a random nonce there instead. The MAC is
// computed by the server and the minting tool (server/src/auth); this layer only lays out the
// bytes, so clients need no crypto library. docs/protocol.md, "Access tokens"; docs/security.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "vod/protocol/byte_order.hpp"
#include "vod/protocol/decode_result.hpp"
#include "vod/protocol/message_header.hpp"

namespace vod::proto {

inline constexpr std::uint8_t kTokenVersion = 1;
inline constexpr std::size_t kTokenSize = 32;
inline constexpr std::size_t kTokenMacSize = 12;  // 96 bits of HMAC-SHA256
inline constexpr std::size_t kTokenSignedSize = kTokenSize - kTokenMacSize;

enum class TokenScope : std::uint8_t {
  all = 0,     // every movie and live channel (scope_hash 0)
  movie = 1,   // the movie whose name hash is scope_hash
  live = 2,    // the live channel whose name hash is scope_hash
  prefix = 3,  // every movie and channel whose name starts with the string whose hash is scope_hash
};

inline constexpr std::uint8_t kTokenBoundToAddress = 0x01;  // the MAC covers the client's IP address
inline constexpr std::uint8_t kTokenKnownFlags = kTokenBoundToAddress;

struct AccessToken {
  std::uint8_t key_id = 0;
  TokenScope scope = TokenScope::all;
  std::uint8_t flags = 0;
  std::uint32_t expires = 0;     // Unix time, seconds
  std::uint64_t scope_hash = 0;  // name_hash() of the movie, channel or prefix
  // Bound tokens: address_hint() of the client's address. Unbound ones: a random nonce, so that no
  // two tokens are the same and one can be revoked alone. The MAC covers it either way.
  std::uint32_t address_hint = 0;
  std::array<std::uint8_t, kTokenMacSize> mac{};

  bool bound_to_address() const noexcept { return (flags & kTokenBoundToAddress) != 0; }
  bool operator==(const AccessToken&) const = default;
};

struct WireAccessToken {
  std::uint8_t version;  // kTokenVersion
  std::uint8_t key_id;
  std::uint8_t scope;
  std::uint8_t flags;
  be32 expires;
  be64 scope_hash;
  be32 address_hint;
  std::uint8_t mac[kTokenMacSize];
};
static_assert(sizeof(WireAccessToken) == kTokenSize);

std::array<std::uint8_t, kTokenSize> encode(const AccessToken& t);
// The bytes the MAC covers (the token without its MAC), to which the server appends the address.
std::array<std::uint8_t, kTokenSignedSize> signed_part(const AccessToken& t);
Decoded<AccessToken> decode_access_token(Bytes buf);

// A token as text, for URIs (?token=) and the command line: 64 lowercase hex digits.
std::string token_text(const std::array<std::uint8_t, kTokenSize>& bytes);
// nullopt unless exactly 64 hex digits.
std::optional<std::array<std::uint8_t, kTokenSize>> parse_token_text(std::string_view text);

// An IP address as 16 bytes (IPv4 as IPv4-mapped IPv6), what a bound token's MAC covers.
using TokenAddress = std::array<std::uint8_t, 16>;
// FNV-1a 32 of the address: a hint, not a secret (the MAC is what binds).
std::uint32_t address_hint(const TokenAddress& a) noexcept;

}  // namespace vod::proto
