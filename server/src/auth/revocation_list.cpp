// SPDX-License-Identifier: LGPL-2.1-or-later
#include "auth/revocation_list.hpp"

#include <stdexcept>

#include "auth/client_address.hpp"
#include "auth/entry_file.hpp"

namespace vod::server::auth {

RevocationList RevocationList::load(const std::filesystem::path& file) {
  RevocationList list;
  for_each_entry(file, "revocation file", [&](const std::vector<std::string>& f, const std::string& where) {
    if (f.size() != 2) throw std::runtime_error(where + "expected 'key N', 'token HEX' or 'client ADDR'");
    const std::string& kind = f[0];
    const std::string& value = f[1];
    if (kind == "key") {
      const auto id = parse_key_id(value);
      if (!id) throw std::runtime_error(where + "the key id '" + value + "' is not 0..255");
      list.keys_.insert(*id);
    } else if (kind == "token") {
      const auto bytes = proto::parse_token_text(value);
      if (!bytes) throw std::runtime_error(where + "the token is not 64 hex digits");
      const auto token = proto::decode_access_token(*bytes);
      if (!token) throw std::runtime_error(where + token.error().message);
      list.tokens_.insert(token->mac);
    } else if (kind == "client") {
      const auto address = parse_address(value);
      if (!address) throw std::runtime_error(where + "'" + value + "' is not an IP address");
      list.clients_.insert(*address);
    } else {
      throw std::runtime_error(where + "unknown entry '" + kind + "' (key, token or client)");
    }
  });
  return list;
}

std::optional<std::string> RevocationList::revoked(const std::optional<proto::AccessToken>& token, const proto::TokenAddress& peer) const {
  if (clients_.count(peer)) return "revoked: the operator cut off client " + address_text(peer);
  if (token && keys_.count(token->key_id)) return "revoked: the operator revoked every token of key " + std::to_string(token->key_id);
  if (token && tokens_.count(token->mac)) return "revoked: the operator revoked this token";
  return std::nullopt;
}

}  // namespace vod::server::auth
