// Test data whose every byte is a function of its offset and a seed: a reader at any offset can be
// checked without the original file, so seek and stale-completion bugs cannot hide.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vod::test {

inline std::uint8_t pattern_byte(std::uint64_t offset, std::uint64_t seed) noexcept {
  const std::uint64_t word = (offset / 8 + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xD6E8FEB86659FD93ull);
  return static_cast<std::uint8_t>(word >> (8 * (offset % 8)));
}

// The offset of the first byte of buf that differs from the pattern at `offset`, or -1.
inline long long first_mismatch(const std::uint8_t* buf, std::size_t n, std::uint64_t offset, std::uint64_t seed) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    if (buf[i] != pattern_byte(offset + i, seed)) return static_cast<long long>(offset + i);
  return -1;
}

}  // namespace vod::test
