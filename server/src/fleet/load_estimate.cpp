// SPDX-License-Identifier: LGPL-2.1-or-later
#include "fleet/load_estimate.hpp"

#include <cmath>

namespace vod::server::fleet {

cluster::MemberLoad estimate_load(const std::map<std::pair<std::string, std::string>, std::size_t>& counts,
                                  const std::function<std::uint64_t(const std::string& kind, const std::string& name)>& bitrate_bps) {
  cluster::MemberLoad load;
  double bps = 0;
  for (const auto& [key, n] : counts) {
    load.connections += n;
    if (n) bps += static_cast<double>(n) * static_cast<double>(bitrate_bps(key.first, key.second));
  }
  load.estimated_mbps = std::round(bps / 1e4) / 100;  // Mbit/s to two decimals: the record changes with the load, not with noise
  return load;
}

}  // namespace vod::server::fleet
