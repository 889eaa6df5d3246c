// Helpers shared by the decoders in this directory (not installed).
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "vod/protocol/decode_result.hpp"

namespace vod::proto::detail {

inline DecodeError fail(DecodeFault fault, std::string message) { return {fault, std::move(message)}; }

inline std::string hex(unsigned long long v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", v);
  return buf;
}

inline std::string num(unsigned long long v) { return std::to_string(v); }

// Reads a NUL-terminated, NUL-padded fixed-size text field (at most N - 1 characters); nullopt when
// the field has no terminator or a byte before it is not printable ASCII.
template <std::size_t N>
std::optional<std::string> fixed_text(const char (&field)[N]) {
  std::string out;
  for (char ch : field) {
    auto c = static_cast<unsigned char>(ch);
    if (c == 0) return out;
    if (c < 0x20 || c > 0x7e) return std::nullopt;
    out.push_back(ch);
  }
  return std::nullopt;
}

}  // namespace vod::proto::detail
