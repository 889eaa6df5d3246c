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
  const std::string what = "live channel '" + uri.movie.value_or("") + "'";
  const auto order = fleet_order(uri);
  MemberTries tries;
  std::unique_ptr<LiveSource> source;
  const auto n = first_accepting(order, what, tries, [&](const PlacedMember& m) { source = open_live(m.uri, rdma, multicast); });
  if (!n)
    throw ClientError(ErrorKind::server_unreachable,
                      "no member of " + uri.cluster->etcd.to_string() + " could serve " + what + ": " + tries.refusals);
  log::info("cluster", what + " on " + order[*n].record.id());
  return source;
}

}  // namespace vod::client
