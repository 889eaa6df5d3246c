// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/udp_admission.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vod/protocol/live_window.hpp"

namespace vod::server::udp {

std::vector<std::uint8_t> udp_catalog(proto::Catalog catalog) {
  for (auto& e : catalog.entries) {
    e.movie = {0, e.movie.length, 0};
    e.index = {0, e.index.length, 0};
  }
  return proto::encode_catalog(catalog);
}

std::string rate_text(double bps) {
  char text[32];
  if (bps >= 1e6) std::snprintf(text, sizeof text, "%g Mbit/s", bps / 1e6);
  else std::snprintf(text, sizeof text, "%.0f bit/s", bps);
  return text;
}

UdpDecision admit_udp(const proto::WriteRecordRequest& r, const std::shared_ptr<const UdpRegions>& generation, const UdpLimits& limits) {
  auto error = [&](proto::RejectCode code, std::string reason) {
    return proto::WriteRecordError{r.session_id, r.epoch, r.record_seq, code, std::move(reason)};
  };
  const UdpRegions& regions = *generation;
  if (r.length > limits.max_record)
    return error(proto::RejectCode::malformed_request, "at most " + std::to_string(limits.max_record >> 20) + " MiB per request");
  if (r.rate_bps < limits.min_rate_bps)  // a reason of at most 48 bytes: "rate_bps 999999 is under the floor, 1 Mbit/s"
    return error(proto::RejectCode::malformed_request,
                 "rate_bps " + std::to_string(r.rate_bps) + " is under the floor, " + rate_text(static_cast<double>(limits.min_rate_bps)));
  UdpJob job;
  std::span<const std::uint8_t> region;
  job.payload = std::min(r.max_payload, limits.max_payload);
  switch (r.region) {
    case proto::WriteRecordRegion::catalog:
      region = regions.catalog;
      job.owner = generation;  // the catalog lives in the generation: the job keeps it
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
      if (r.region == proto::WriteRecordRegion::movie && m->second.cached) {  // its bytes come from the cache's slots
        // A live channel's DVR window is read by stream offsets (vod/protocol/live_window.hpp).
        const std::uint64_t size = m->second.cached->window() ? proto::kWindowStreamBytes : m->second.cached->size();
        if (r.offset >= size || r.length > size - r.offset)
          return error(proto::RejectCode::malformed_request, "range past the end of the " + std::to_string(size) + "-byte region");
        job.cached = m->second.cached;
        job.offset = r.offset;
        job.length = r.length;
        return job;
      }
      break;
    }
  }
  if (r.offset >= region.size() || r.length > region.size() - r.offset)
    return error(proto::RejectCode::malformed_request, "range past the end of the " + std::to_string(region.size()) + "-byte region");
  job.bytes = region.subspan(static_cast<std::size_t>(r.offset), static_cast<std::size_t>(r.length));
  return job;
}

std::chrono::steady_clock::time_point job_deadline(std::chrono::steady_clock::time_point admitted, std::uint64_t bytes, double rate_bps,
                                                   const JobLife& life) {
  using namespace std::chrono;
  const double wire_s = rate_bps > 0 ? static_cast<double>(bytes) * 8 / rate_bps : 1e9;
  const double ms = std::min(2 * wire_s * 1000 + static_cast<double>(life.grace.count()), static_cast<double>(life.max_life.count()));
  return admitted + duration_cast<steady_clock::duration>(duration<double, std::milli>(ms));
}

std::size_t datagrams_per_send(std::uint32_t payload, double budget, std::uint64_t left, bool gso) noexcept {
  if (payload == 0 || left == 0) return 0;
  const std::size_t wire = payload + sizeof(proto::WireWriteRecordDataHeader);
  // Capped before the conversion: any budget (an unlimited one included) is at most a train's worth.
  const double fits = budget / static_cast<double>(wire);
  const std::size_t afford = fits >= 1 ? static_cast<std::size_t>(std::min(fits, static_cast<double>(kGsoSegments))) : 0;
  const std::uint64_t needed = (left + payload - 1) / payload;
  // With GSO: at most kGsoSegments and kGsoBytes in one train, and always one (a single datagram
  // needs no GSO, whatever its size).
  const std::size_t train = gso ? std::max<std::size_t>(1, std::min(kGsoSegments, kGsoBytes / wire)) : 1;
  return static_cast<std::size_t>(std::min<std::uint64_t>({afford, needed, train}));
}

}  // namespace vod::server::udp
