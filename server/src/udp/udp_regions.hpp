// SPDX-License-Identifier: LGPL-2.1-or-later
// A catalog generation as the UDP side serves it, built from the same loaded library the RDMA side
// registers: nothing is copied, the movies' bytes are shared.
#pragma once

#include <memory>
#include <vector>

#include "movie_library.hpp"
#include "udp/udp_admission.hpp"

namespace vod::server::udp {

// `live`: the live channels' catalog entries (listed for UDP clients, served over RDMA only). Not
// const yet: the server's status words (fleet/status_words.hpp) are written into its catalog.
std::shared_ptr<UdpRegions> udp_regions(const Library& library, const std::vector<proto::CatalogEntry>& live);

}  // namespace vod::server::udp
