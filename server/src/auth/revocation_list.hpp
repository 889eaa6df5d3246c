// SPDX-License-Identifier: LGPL-2.1-or-later
// What an operator has cut off (vod-server --revoked FILE, re-read on SIGHUP): a key id, one
// token, or a client address. New connects that match are refused as 'unauthorized'; connections
// that match are disconnected when the file is re-read. Pure, unit-tested without a NIC.
//
// The file: one entry per line, "key N", "token HEX" (the 64 hex digits vod-token printed) or
// "client ADDR"; blank lines and '#' comments are ignored.
#pragma once

#include <array>
#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include "vod/protocol/access_token.hpp"

namespace vod::server::auth {

class RevocationList {
 public:
  // Throws std::runtime_error naming the file and line of what is wrong.
  static RevocationList load(const std::filesystem::path& file);

  // Why a connection with `token` (none: a connection without one) from `peer` is cut off, or
  // nullopt when it is not.
  std::optional<std::string> revoked(const std::optional<proto::AccessToken>& token, const proto::TokenAddress& peer) const;
  std::size_t size() const noexcept { return keys_.size() + tokens_.size() + clients_.size(); }

 private:
  std::set<std::uint8_t> keys_;
  std::set<std::array<std::uint8_t, proto::kTokenMacSize>> tokens_;  // by MAC: unique per token
  std::set<proto::TokenAddress> clients_;
};

}  // namespace vod::server::auth
