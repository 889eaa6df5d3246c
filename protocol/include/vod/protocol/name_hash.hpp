// Movie selectors: a 64-bit FNV-1a hash of the movie's name, as UTF-8 bytes. A server refuses to
// publish two names with the same hash (it logs the collision and serves the first).
#pragma once

#include <cstdint>
#include <string_view>

namespace vod::proto {

constexpr std::uint64_t name_hash(std::string_view name) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

static_assert(name_hash("") == 0xcbf29ce484222325ull);
static_assert(name_hash("a") == 0xaf63dc4c8601ec8cull);

}  // namespace vod::proto
