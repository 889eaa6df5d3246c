// SPDX-License-Identifier: LGPL-2.1-or-later
#include "auth/revocation_list.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "auth/source_limits.hpp"
#include "auth/token_authority.hpp"

namespace vod::server::auth {

RevocationList RevocationList::load(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read the revocation file " + file.string());
  RevocationList list;
  std::string line;
  for (unsigned number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string kind, value, extra;
    if (!(fields >> kind)) continue;
    const std::string where = file.string() + ":" + std::to_string(number) + ": ";
    if (!(fields >> value) || (fields >> extra)) throw std::runtime_error(where + "expected 'key N', 'token HEX' or 'client ADDR'");
    if (kind == "key") {
      if (value.empty() || value.size() > 3 || value.find_first_not_of("0123456789") != std::string::npos || std::stoul(value) > 255)
        throw std::runtime_error(where + "the key id '" + value + "' is not 0..255");
      list.keys_.insert(static_cast<std::uint8_t>(std::stoul(value)));
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
  }
  return list;
}

std::optional<std::string> RevocationList::revoked(const std::optional<proto::AccessToken>& token, const proto::TokenAddress& peer) const {
  if (clients_.count(peer)) return "revoked: the operator cut off client " + address_text(peer);
  if (token && keys_.count(token->key_id)) return "revoked: the operator revoked every token of key " + std::to_string(token->key_id);
  if (token && tokens_.count(token->mac)) return "revoked: the operator revoked this token";
  return std::nullopt;
}

}  // namespace vod::server::auth
