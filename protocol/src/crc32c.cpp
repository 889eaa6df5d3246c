// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/protocol/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace vod::proto {

namespace {

constexpr std::uint32_t kPolynomial = 0x82f63b78;  // Castagnoli, reflected

constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kPolynomial : c >> 1;
    t[i] = c;
  }
  return t;
}
constexpr auto kTable = make_table();

std::uint32_t by_table(std::uint32_t c, const std::uint8_t* p, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) c = kTable[(c ^ p[i]) & 0xff] ^ (c >> 8);
  return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t by_instruction(std::uint32_t c, const std::uint8_t* p, std::size_t n) noexcept {
  std::uint64_t c64 = c;
  for (; n >= 8; n -= 8, p += 8) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    c64 = _mm_crc32_u64(c64, v);
  }
  c = static_cast<std::uint32_t>(c64);
  for (; n > 0; --n, ++p) c = _mm_crc32_u8(c, *p);
  return c;
}
const bool kHaveSse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

std::uint32_t crc32c(std::uint32_t crc, std::span<const std::uint8_t> bytes) noexcept {
  std::uint32_t c = ~crc;
#if defined(__x86_64__)
  if (kHaveSse42) return ~by_instruction(c, bytes.data(), bytes.size());
#endif
  return ~by_table(c, bytes.data(), bytes.size());
}

static_assert(make_table()[1] == 0xf26b8303);  // the table's first non-trivial entry, as in RFC 3720

}  // namespace vod::proto
