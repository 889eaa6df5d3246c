// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/protocol/access_token.hpp"

#include <algorithm>
#include <cstring>

#include "decode_support.hpp"
#include "vod/protocol/hex_text.hpp"

namespace vod::proto {

using detail::fail;
using detail::hex;
using detail::num;

std::array<std::uint8_t, kTokenSize> encode(const AccessToken& t) {
  WireAccessToken w{};
  w.version = kTokenVersion;
  w.key_id = t.key_id;
  w.scope = static_cast<std::uint8_t>(t.scope);
  w.flags = t.flags;
  w.expires = t.expires;
  w.scope_hash = t.scope_hash;
  w.address_hint = t.address_hint;
  std::copy(t.mac.begin(), t.mac.end(), w.mac);
  std::array<std::uint8_t, kTokenSize> out{};
  std::memcpy(out.data(), &w, sizeof w);
  return out;
}

std::array<std::uint8_t, kTokenSignedSize> signed_part(const AccessToken& t) {
  const auto all = encode(t);
  std::array<std::uint8_t, kTokenSignedSize> out{};
  std::copy_n(all.begin(), kTokenSignedSize, out.begin());
  return out;
}

Decoded<AccessToken> decode_access_token(Bytes buf) {
  if (buf.size() < kTokenSize) return fail(DecodeFault::truncated, "access token: " + num(buf.size()) + " bytes, 32 needed");
  WireAccessToken w;
  std::memcpy(&w, buf.data(), sizeof w);
  if (w.version != kTokenVersion)
    return fail(DecodeFault::unsupported_version, "access token: version " + num(w.version) + " (this server reads version 1)");
  AccessToken t;
  if (w.scope > static_cast<std::uint8_t>(TokenScope::prefix))
    return fail(DecodeFault::bad_field, "access token: unknown scope " + num(w.scope) + " (0..3 are defined)");
  if (w.flags & ~kTokenKnownFlags) return fail(DecodeFault::bad_field, "access token: undefined flags " + hex(w.flags));
  t.key_id = w.key_id;
  t.scope = static_cast<TokenScope>(w.scope);
  t.flags = w.flags;
  t.expires = w.expires.get();
  t.scope_hash = w.scope_hash.get();
  t.address_hint = w.address_hint.get();
  if ((t.scope == TokenScope::all) != (t.scope_hash == 0))
    return fail(DecodeFault::inconsistent, "access token: scope 'all' has no name hash, and every other scope has one");
  std::copy(std::begin(w.mac), std::end(w.mac), t.mac.begin());
  return t;
}

std::string token_text(const std::array<std::uint8_t, kTokenSize>& bytes) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string s;
  for (std::uint8_t b : bytes) {
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

std::optional<std::vector<std::uint8_t>> parse_hex(std::string_view text) {
  if (text.size() % 2) return std::nullopt;
  std::vector<std::uint8_t> out(text.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const int hi = hex_digit(text[2 * i]), lo = hex_digit(text[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return out;
}

std::optional<std::array<std::uint8_t, kTokenSize>> parse_token_text(std::string_view text) {
  if (text.size() != 2 * kTokenSize) return std::nullopt;
  const auto bytes = parse_hex(text);
  if (!bytes) return std::nullopt;
  std::array<std::uint8_t, kTokenSize> out{};
  std::copy(bytes->begin(), bytes->end(), out.begin());
  return out;
}

std::uint32_t address_hint(const TokenAddress& a) noexcept {
  std::uint32_t h = 2166136261u;
  for (std::uint8_t b : a) h = (h ^ b) * 16777619u;
  return h;
}

}  // namespace vod::proto
