// SPDX-License-Identifier: LGPL-2.1-or-later
// Access tokens arrive from any client in the connect request: whatever the 32 bytes hold, decoding
// either fails with a reason or gives a token that encodes back to the same bytes; the text form
// parses only 64 hex digits.
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "vod/protocol/access_token.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  const auto token = decode_access_token(Bytes(data, size));
  if (token) {
    const auto again = encode(*token);
    if (size < kTokenSize || std::memcmp(again.data(), data, kTokenSize) != 0) std::abort();
  } else if (token.error().message.empty()) {
    std::abort();
  }
  const auto parsed = parse_token_text(std::string_view(reinterpret_cast<const char*>(data), size));
  if (parsed && (size != 2 * kTokenSize || token_text(*parsed).size() != size)) std::abort();
  return 0;
}
