// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/udp_admission.hpp"

#include <algorithm>

namespace vod::server::udp {

std::vector<std::uint8_t> udp_catalog(proto::Catalog catalog) {
  for (auto& e : catalog.entries) {
    e.movie = {0, e.movie.length, 0};
    e.index = {0, e.index.length, 0};
  }
  return proto::encode_catalog(catalog);
}

UdpDecision admit_udp(const proto::WriteRecordRequest& r, const UdpRegions& regions, const UdpLimits& limits) {
  auto error = [&](proto::RejectCode code, std::string reason) {
    return proto::WriteRecordError{r.session_id, r.epoch, r.record_seq, code, std::move(reason)};
  };
  if (r.length > limits.max_record)
    return error(proto::RejectCode::malformed_request, "at most " + std::to_string(limits.max_record >> 20) + " MiB per request");
  UdpJob job;
  std::span<const std::uint8_t> region;
  switch (r.region) {
    case proto::WriteRecordRegion::catalog:
      region = regions.catalog;
      break;
    case proto::WriteRecordRegion::movie:
    case proto::WriteRecordRegion::index: {
      if (r.catalog_generation != 0 && r.catalog_generation != regions.generation)
        return error(proto::RejectCode::stale_catalog, "catalog generation " + std::to_string(regions.generation) + " is current: read it");
      auto m = regions.movies.find(r.selector);
      if (m == regions.movies.end()) {
        if (regions.live.count(r.selector)) return error(proto::RejectCode::unsupported_kind, "live channels are served over RDMA only");
        return error(proto::RejectCode::unknown_movie, "no such movie in generation " + std::to_string(regions.generation));
      }
      region = r.region == proto::WriteRecordRegion::movie ? m->second.bytes : m->second.index;
      job.owner = m->second.owner;
      break;
    }
  }
  if (r.offset >= region.size() || r.length > region.size() - r.offset)
    return error(proto::RejectCode::malformed_request, "range past the end of the " + std::to_string(region.size()) + "-byte region");
  job.bytes = region.subspan(static_cast<std::size_t>(r.offset), static_cast<std::size_t>(r.length));
  job.payload = std::min(r.max_payload, limits.max_payload);
  return job;
}

}  // namespace vod::server::udp
