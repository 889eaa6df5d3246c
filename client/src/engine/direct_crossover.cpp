// SPDX-License-Identifier: LGPL-2.1-or-later
#include "engine/direct_crossover.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace vod::client::engine {

std::size_t direct_crossover(std::string_view device_name, std::size_t chunk) noexcept {
  static constexpr std::array<std::pair<std::string_view, std::size_t>, 2> kSoftware{{{"rxe", 16u << 10}, {"siw", 16u << 10}}};
  constexpr std::size_t kRnic = 256u << 10;
  std::size_t bytes = kRnic;
  for (const auto& [prefix, crossover] : kSoftware)
    if (device_name.substr(0, prefix.size()) == prefix) bytes = crossover;
  return std::max<std::size_t>(1, std::min(bytes, chunk));
}

}  // namespace vod::client::engine
