// Test data whose every byte is a function of its offset and a seed: a reader at any offset can be
// checked without the original file, so seek and stale-completion bugs cannot hide.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vod::test {

// The 64-bit word that holds bytes [8*index, 8*index+8), least significant byte first.
inline std::uint64_t pattern_word(std::uint64_t index, std::uint64_t seed) noexcept {
  return (index + 1) * 0x9E3779B97F4A7C15ull ^ (seed * 0xD6E8FEB86659FD93ull);
}

inline std::uint8_t pattern_byte(std::uint64_t offset, std::uint64_t seed) noexcept {
  return static_cast<std::uint8_t>(pattern_word(offset / 8, seed) >> (8 * (offset % 8)));
}

// The offset of the first byte of buf that differs from the pattern at `offset`, or -1.
inline long long first_mismatch(const std::uint8_t* buf, std::size_t n, std::uint64_t offset, std::uint64_t seed) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    if (buf[i] != pattern_byte(offset + i, seed)) return static_cast<long long>(offset + i);
  return -1;
}

}  // namespace vod::test
