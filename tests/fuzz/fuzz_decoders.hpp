// Shared body of the libFuzzer targets: decode arbitrary bytes; when that succeeds, re-encoding and
// decoding again must give the same value (no decoder accepts what its encoder cannot express).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <span>

namespace vod::fuzz {

template <class Decode, class Encode>
void round_trip(const std::uint8_t* data, std::size_t size, Decode decode, Encode encode) {
  auto first = decode(std::span<const std::uint8_t>(data, size));
  if (!first) return;
  const auto bytes = encode(*first);
  auto second = decode(std::span<const std::uint8_t>(bytes.data(), bytes.size()));
  if (!second || !(*second == *first)) std::abort();
}

}  // namespace vod::fuzz
