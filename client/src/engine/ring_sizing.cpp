// SPDX-License-Identifier: LGPL-2.1-or-later
// ring_bytes_for() and fit_rings() (read_engine.hpp).
#include "engine/ring_sizing.hpp"

#include <cstdint>
#include <optional>

namespace vod::client {

using engine::chunk_of;
using engine::slots_of;

std::size_t ring_bytes_for(const EngineOptions& o) noexcept { return slots_of(o) * chunk_of(o); }

std::optional<EngineOptions> fit_rings(const EngineOptions& o, std::size_t sessions, std::uint64_t budget) noexcept {
  const auto fits = [&](const EngineOptions& e) { return std::uint64_t{ring_bytes_for(e)} * std::max<std::size_t>(sessions, 1) <= budget; };
  if (fits(o)) return o;
  EngineOptions e = o;
  const std::size_t chunk = chunk_of(o);
  // Halving the read-ahead, then the depth: each step keeps as much of what was asked as fits.
  while (e.readahead_bytes > chunk) {
    e.readahead_bytes = std::max(chunk, e.readahead_bytes / 2);
    if (fits(e)) return e;
  }
  while (e.read_depth > 2) {
    e.read_depth = std::max(2u, e.read_depth / 2);
    e.readahead_depth = std::min(e.readahead_depth, e.read_depth);
    if (fits(e)) return e;
  }
  return std::nullopt;
}

}  // namespace vod::client
