// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/open_live.hpp"

#include "vod/client/fleet.hpp"
#include "vod/log.hpp"

namespace vod::client {

std::unique_ptr<LiveSource> open_live(const Uri& uri, const LiveOptions& rdma, const std::optional<MulticastLiveOptions>& multicast) {
  if (!uri.cluster) {
    if (multicast) return std::make_unique<MulticastLiveSession>(uri, *multicast);
    return std::make_unique<LiveSession>(uri, rdma);
  }
  // A fleet over RDMA: the session places itself, and goes to another member when its own fails.
  if (!multicast) return std::make_unique<LiveSession>(uri, rdma);
  // By multicast: the members that list the channel, the first that accepts (fleet.hpp).
  std::string refusals;
  for (const auto& m : fleet_order(uri)) {
    try {
      auto source = open_live(m.uri, rdma, multicast);
      log::info("cluster", "live channel '" + uri.movie.value_or("") + "' on " + m.record.id());
      return source;
    } catch (const ClientError& e) {
      if (!try_next_member(e)) throw;
      refusals += std::string(refusals.empty() ? "" : "; ") + e.what();
    }
  }
  throw ClientError(ErrorKind::server_unreachable, "no member of " + uri.cluster->etcd.to_string() + " could serve live channel '" +
                                                       uri.movie.value_or("") + "': " + refusals);
}

}  // namespace vod::client
