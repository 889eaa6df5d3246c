// SPDX-License-Identifier: LGPL-2.1-or-later
// Hex digits as text: one decoder for access tokens, key files and percent-encoding.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace vod::proto {

// 0..15 for a hex digit (either case), -1 otherwise.
constexpr int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The bytes of an even number of hex digits; nullopt for anything else.
std::optional<std::vector<std::uint8_t>> parse_hex(std::string_view text);

}  // namespace vod::proto
