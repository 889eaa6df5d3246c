// SPDX-License-Identifier: LGPL-2.1-or-later
// What a member record says about this server's load: its connections, and an estimate of the
// Mbit/s being read. One-sided Reads are invisible to the server, so the estimate is the sum of
// each connection's movie bitrate (a live viewer: its channel's), labelled as an estimate. Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "vod/cluster/member_record.hpp"

namespace vod::server::fleet {

// counts: (kind, movie or channel) -> connections, as ServerMetrics::ConnectionCounts;
// bitrate_bps(kind, name): 0 when unknown (a catalog-only connection reads nothing steadily).
cluster::MemberLoad estimate_load(const std::map<std::pair<std::string, std::string>, std::size_t>& counts,
                                  const std::function<std::uint64_t(const std::string& kind, const std::string& name)>& bitrate_bps);

}  // namespace vod::server::fleet
