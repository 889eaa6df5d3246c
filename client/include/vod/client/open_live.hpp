// SPDX-License-Identifier: LGPL-2.1-or-later
// Opens a live channel (rdma://host[:port]/live/NAME) the one way its caller can read it: by UDP
// multicast when `multicast` is given (no RDMA device needed), otherwise over RDMA.
#pragma once

#include <memory>
#include <optional>

#include "vod/client/live_session.hpp"
#include "vod/client/live_source.hpp"
#include "vod/client/multicast_live_session.hpp"
#include "vod/client/uri.hpp"

namespace vod::client {

// Throws ClientError, as the sessions' constructors do.
std::unique_ptr<LiveSource> open_live(const Uri& uri, const LiveOptions& rdma, const std::optional<MulticastLiveOptions>& multicast);

}  // namespace vod::client
