// Movie selectors: a 64-bit FNV-1a hash of the movie's name, as UTF-8 bytes. A server refuses to
// publish two names with the same hash (it logs the collision and serves the first).
#pragma once

#include <cstdint>
#include <string_view>

namespace vod::proto {

inline constexpr std::uint64_t kNameHashSeed = 0xcbf29ce484222325ull;  // the hash of ""

// One byte more: name_hash(s + c) == name_hash_step(name_hash(s), c), so a scan hashes every
// prefix of a name in one pass.
constexpr std::uint64_t name_hash_step(std::uint64_t h, unsigned char c) noexcept { return (h ^ c) * 0x100000001b3ull; }

constexpr std::uint64_t name_hash(std::string_view name) noexcept {
  std::uint64_t h = kNameHashSeed;
  for (unsigned char c : name) h = name_hash_step(h, c);
  return h;
}

static_assert(name_hash("") == 0xcbf29ce484222325ull);
static_assert(name_hash("a") == 0xaf63dc4c8601ec8cull);

}  // namespace vod::proto
