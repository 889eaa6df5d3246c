// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/open_live.hpp"

namespace vod::client {

std::unique_ptr<LiveSource> open_live(const Uri& uri, const LiveOptions& rdma, const std::optional<MulticastLiveOptions>& multicast) {
  if (multicast) return std::make_unique<MulticastLiveSession>(uri, *multicast);
  return std::make_unique<LiveSession>(uri, rdma);
}

}  // namespace vod::client
