// SPDX-License-Identifier: LGPL-2.1-or-later
// Access tokens (vod/protocol/access_token.hpp): the keys from --auth-secret, minting (vod-token)
// and the check a connect request's token must pass. Pure apart from OpenSSL's HMAC, so every rule
// is unit-tested without a NIC. docs/security.md.
//
// The keys file: one key per line, "ID HEX" (ID 0..255, HEX at least 32 bytes of secret as 64 hex
// digits); blank lines and '#' comments are ignored. Rotation: add a key, mint with it, remove the
// old one once its tokens have expired (or at once, to revoke them all).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/client_address.hpp"
#include "vod/protocol/access_token.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/private_data.hpp"

namespace vod::server::auth {

inline constexpr std::size_t kMinSecretBytes = 32;

class TokenAuthority {
 public:
  // Throws std::runtime_error naming the file and line of what is wrong.
  static TokenAuthority load(const std::filesystem::path& file);
  explicit TokenAuthority(std::map<std::uint8_t, std::vector<std::uint8_t>> keys);

  std::size_t key_count() const noexcept { return keys_.size(); }
  std::uint8_t newest_key() const { return keys_.rbegin()->first; }  // the highest id

  // A token for `scope` (the name of the movie, channel or prefix; ignored for all) under key
  // `key_id`, valid until `expires` (Unix seconds), bound to `client` when given. Throws
  // std::invalid_argument for an unknown key or a scope without a name.
  proto::AccessToken mint(std::uint8_t key_id, proto::TokenScope scope, std::string_view name, std::uint32_t expires,
                          const std::optional<proto::TokenAddress>& client) const;

  // Why the request may not have `entry` (null: the catalog alone), or nullopt when it may.
  // The reason names which check failed: missing, malformed, unknown key, forged, another
  // address, expired, or out of scope.
  std::optional<std::string> refusal(const proto::ConnectRequest& request, const proto::CatalogEntry* entry, std::uint64_t now_unix,
                                     const proto::TokenAddress& peer) const;
  // The last of those checks alone, for a token that already passed the others: nullopt when it
  // grants `entry`.
  static std::optional<std::string> out_of_scope(const proto::AccessToken& token, const proto::CatalogEntry& entry);

 private:
  std::array<std::uint8_t, proto::kTokenMacSize> mac(const proto::AccessToken& t, const proto::TokenAddress* address) const;

  std::map<std::uint8_t, std::vector<std::uint8_t>> keys_;
};

// "2h", "90m", "30s", "1d", or plain seconds; throws std::invalid_argument.
std::uint32_t parse_duration(const std::string& text);

}  // namespace vod::server::auth
