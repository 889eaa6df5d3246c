// SPDX-License-Identifier: LGPL-2.1-or-later
// A client's IP address as the access-control code keys it: 16 bytes, IPv4 as IPv4-mapped IPv6
// (::ffff:a.b.c.d), so that bound tokens, revocations and per-address limits agree on one form.
#pragma once

#include <optional>
#include <string>

#include <sys/socket.h>

#include "vod/protocol/access_token.hpp"

namespace vod::server::auth {

// "192.0.2.1", "::1", "2001:db8::1" -> 16 bytes; nullopt when not an IP address.
std::optional<proto::TokenAddress> parse_address(const std::string& text);
// The address of a socket address (rdma_get_peer_addr); all zeros for another family.
proto::TokenAddress address_of(const sockaddr* sa);
// "192.0.2.7" or "2001:db8::1".
std::string address_text(const proto::TokenAddress& a);

}  // namespace vod::server::auth
