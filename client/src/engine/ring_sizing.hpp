// SPDX-License-Identifier: LGPL-2.1-or-later
// How big an engine's blocks and ring are, from its options: what ring_bytes_for(), fit_rings()
// and the engine itself agree on.
#pragma once

#include <algorithm>
#include <cstddef>

#include "vod/client/read_engine.hpp"

namespace vod::client::engine {

inline constexpr std::size_t kMinChunk = 8 * 1024;
inline constexpr std::size_t kPage = 4096;  // blocks, and heads within them, are page-aligned

// The block size: the chunk asked for, at least kMinChunk, rounded up to pages.
inline std::size_t chunk_of(const EngineOptions& o) noexcept { return (std::max(o.chunk_size, kMinChunk) + kPage - 1) / kPage * kPage; }

// The ring's slots: one per Read in flight, the read-ahead window's, and two more.
inline std::size_t slots_of(const EngineOptions& o) noexcept {
  const std::size_t chunk = chunk_of(o);
  return std::max(o.read_depth, 1u) + (o.readahead_bytes + chunk - 1) / chunk + 2;
}

}  // namespace vod::client::engine
