// SPDX-License-Identifier: LGPL-2.1-or-later
#include "registrations.hpp"

#include <sys/random.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "vod/log.hpp"
#include "vod/rdma/error.hpp"
#include "windows/isolation.hpp"

namespace vod::server {

Device::Device(ibv_context* ctx, rdma::DeviceLimits device_limits, windows::Isolation mode)
    : context(ctx), limits(std::move(device_limits)), isolation(mode), pd(rdma::alloc_pd(ctx)) {}

namespace {
std::string hex_rkey(std::uint32_t rkey) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%x", rkey);
  return buf;
}

proto::RegionDescriptor describe(const ibv_mr* mr, std::uint64_t length) {
  if (length == 0) return {};  // an empty region is all zeros on the wire
  return {reinterpret_cast<std::uint64_t>(mr->addr), length, mr->rkey};
}
}  // namespace

proto::RegionDescriptor MovieRegistration::movie_region() const noexcept {
  if (movie->cached) return device->arena_region();
  return describe(movie_mr.get(), movie->size());
}
proto::RegionDescriptor Device::arena_region() const noexcept {
  // Isolated, no rkey: its slots are read through what each client gets per slot it asks for.
  return {arena_addr, arena_length, arena && !isolated() ? arena->rkey : 0};
}
proto::RegionDescriptor MovieRegistration::segments_region() const noexcept {
  return movie->cached ? describe(table_mr.get(), movie->cached->table_length()) : proto::RegionDescriptor{};
}
proto::RegionDescriptor MovieRegistration::index_region() const noexcept { return describe(index_mr.get(), movie->index_bytes.length()); }
proto::RegionDescriptor CatalogRegistration::region() const noexcept { return describe(mr.get(), bytes.length()); }

proto::AcceptData CatalogRegistration::accept_common() const {
  proto::AcceptData a;
  a.catalog_generation = catalog.generation;
  a.max_message_size = device->limits.max_msg_size;
  a.catalog = region();
  return a;
}

proto::AcceptData CatalogRegistration::accept_for(std::uint32_t index) const {
  proto::AcceptData a = accept_common();
  a.movie_index = index;
  if (index != proto::kNoMovie) {
    a.movie = movies[index]->movie_region();
    a.index = movies[index]->index_region();
    a.segments = movies[index]->segments_region();
    if (!a.segments.empty()) a.movie_size = movies[index]->movie->size();
  }
  return a;
}

proto::CatalogEntry catalog_entry(const LoadedMovie& movie, const proto::RegionDescriptor& bytes, const proto::RegionDescriptor& index,
                                  const proto::RegionDescriptor& segments) {
  proto::CatalogEntry e;
  e.name = movie.name;
  e.size = movie.size();
  e.duration_us = movie.info.duration_us;
  e.bitrate_bps = movie.info.bitrate_bps;
  e.movie = bytes;
  e.index = index;
  e.segments = segments;
  e.flags = (movie.info.is_media ? proto::kEntryIsMedia : 0) |
            (movie.index.entries.empty() && !movie.index_pending ? 0 : proto::kEntryHasIndex) |
            (segments.empty() ? 0 : proto::kEntrySegmented);
  e.width = movie.info.width;
  e.height = movie.info.height;
  e.container = movie.info.container;
  e.video_codec = movie.info.video_codec.substr(0, 15);
  e.audio_codec = movie.info.audio_codec.substr(0, 15);
  e.mime_type = movie.info.mime_type.substr(0, 47);
  e.content = movie.content;
  return e;
}

std::shared_ptr<Device> open_device(ibv_context* ctx, std::uint8_t port, const std::string& isolation, bool tokens) {
  const std::string name = rdma::device_name(ctx);
  // With tokens, each device keeps every connection to what its token granted, as strongly as it
  // can (windows, else a PD per connection), or as --isolation says.
  const rdma::DeviceLimits limits = rdma::query_limits(ctx, port);
  const auto chosen = windows::choose_isolation(windows::parse_isolation(isolation), tokens, limits.type2_windows, limits.iwarp, name);
  if (chosen.mode == windows::Isolation::shared) log::warn("auth", chosen.why);
  else if (chosen.mode != windows::Isolation::none) log::info("auth", chosen.why);
  auto device = std::make_shared<Device>(ctx, limits, chosen.mode);
  log::info("server", "device " + name + (limits.iwarp ? " (iWARP)" : "") + ": max_qp_rd_atom " + std::to_string(limits.max_qp_rd_atom) +
                          ", max_msg_size " + std::to_string(limits.max_msg_size) + ", active MTU " +
                          std::to_string(limits.active_mtu_bytes));
  return device;
}

void register_arena(Device& device, const cache::SegmentCache& cache) {
  const std::uint64_t length = cache.arena_length(), slot = cache.options().segment_size;
  device.arena_addr = reinterpret_cast<std::uint64_t>(const_cast<std::uint8_t*>(cache.arena().data()));
  device.arena_length = length;
  std::uint32_t lkey = 0;
  if (device.own_pds()) return;
  if (!device.binds_windows()) {
    device.arena = rdma::register_memory(device.pd.get(), const_cast<std::uint8_t*>(cache.arena().data()), length, IBV_ACCESS_REMOTE_READ,
                                         "the segment cache's arena");
    lkey = device.arena->lkey;
  } else {
    if (cache.slots() > device.limits.max_mr / 2)
      throw std::runtime_error("device " + device.limits.name + " allows " + std::to_string(device.limits.max_mr) +
                               " memory regions, too few for " + std::to_string(cache.slots()) +
                               " cache slots registered one by one (with tokens): raise --segment-size");
    device.arena_slots.reserve(cache.slots());
    for (std::uint32_t i = 0; i < cache.slots(); ++i)
      device.arena_slots.push_back(rdma::register_memory(device.pd.get(),
                                                         const_cast<std::uint8_t*>(cache.arena().data()) + std::uint64_t{i} * slot, slot,
                                                         IBV_ACCESS_MW_BIND, "segment cache slot " + std::to_string(i)));
    lkey = device.arena_slots[0]->lkey;
  }
  // For the operator's eyes only (debug level): with windows, no client ever learns these keys.
  char keys[32];
  std::snprintf(keys, sizeof keys, "lkey 0x%x", lkey);
  log::debug("cache", "registered the arena on " + device.limits.name + ": " + std::to_string(length) + " bytes, " +
                          (device.binds_windows() ? std::to_string(cache.slots()) + " regions, slot 0's " + keys + " (window binding only)"
                                                  : std::string(keys) + " (remote read)"));
}

std::uint64_t catalog_instance() {
  static const std::uint64_t instance = [] {
    std::uint64_t n = 0;
    while (n == 0)
      if (getrandom(&n, sizeof n, 0) != static_cast<ssize_t>(sizeof n))
        throw std::runtime_error(std::string("getrandom: ") + std::strerror(errno));
    return n;
  }();
  return instance;
}

std::shared_ptr<CatalogRegistration> register_library(const std::shared_ptr<Device>& device, const Library& library,
                                                      const std::vector<proto::CatalogEntry>& extra) {
  const auto started = std::chrono::steady_clock::now();
  auto reg = std::make_shared<CatalogRegistration>();
  reg->device = device;
  reg->catalog.generation = library.generation;
  reg->catalog.instance = catalog_instance();
  std::size_t fresh = 0;
  for (const auto& movie : library.movies) {
    std::shared_ptr<MovieRegistration> m = device->movies[movie.get()].lock();
    if (!m) {
      m = std::make_shared<MovieRegistration>();
      m->device = device;
      m->movie = movie;
      // REMOTE_READ only (or, with windows, binding only: reads go through a window), and exactly
      // the bytes the catalog advertises (the device enforces the registered length byte for byte;
      // the mapping's slack past the end stays unreachable). An empty movie registers one byte
      // that no descriptor names.
      if (movie->cached) {
        if (!device->arena_length) throw std::logic_error("a cached movie on a device without the arena");
        m->table_mr = rdma::register_memory(device->pd.get(), movie->cached->table().data(), movie->cached->table_length(),
                                            device->region_access(), "segment table of " + movie->name);
      } else {
        m->movie_mr = rdma::register_memory(device->pd.get(), movie->bytes.data(), std::max<std::size_t>(movie->bytes.length(), 1),
                                            device->region_access(), "movie " + movie->name);
      }
      m->index_mr =
          rdma::register_memory(device->pd.get(), movie->index_bytes.data(), std::max<std::size_t>(movie->index_bytes.length(), 1),
                                device->region_access(), "keyframe index of " + movie->name);
      device->movies[movie.get()] = m;
      ++fresh;
      // For the operator's eyes only (debug level): with windows, no client ever learns this rkey.
      if (m->movie_mr)
        log::debug("server", "registered movie " + movie->name + " on " + device->limits.name + ": " + std::to_string(movie->size()) +
                                 " bytes, lkey " + hex_rkey(m->movie_mr->lkey) + " rkey " + hex_rkey(m->movie_mr->rkey) +
                                 (device->binds_windows() ? " (window binding only)"
                                  : device->own_pds()     ? " (no remote access: each client registers its own)"
                                                          : " (remote read)"));
    }
    reg->catalog.entries.push_back(catalog_entry(*movie, m->movie_region(), m->index_region(), m->segments_region()));
    reg->movies.push_back(std::move(m));
  }
  for (const auto& e : extra) reg->catalog.entries.push_back(e);
  reg->catalog.titles = library.titles;  // entry indexes are positions in library.movies, listed first
  // With windows or a PD per client the shared catalog must not publish rkeys that would bypass
  // them: a client connects for each movie (or channel) and gets rkeys of its own in the accept.
  if (device->isolated())
    for (auto& e : reg->catalog.entries) {
      e.movie.rkey = 0;
      e.index.rkey = 0;
      e.segments.rkey = 0;
      e.flags |= proto::kEntryWindowed;
    }
  // Drop cache entries of movies no generation uses any more.
  std::erase_if(device->movies, [](const auto& kv) { return kv.second.expired(); });

  const auto bytes = proto::encode_catalog(reg->catalog);
  reg->bytes = HostBuffer(bytes.size());
  std::memcpy(reg->bytes.data(), bytes.data(), bytes.size());
  reg->mr = rdma::register_memory(device->pd.get(), reg->bytes.data(), reg->bytes.length(), device->region_access(),
                                  "catalog generation " + std::to_string(library.generation));
  log::info("server",
            "registered generation " + std::to_string(library.generation) + " on " + device->limits.name + ": " +
                std::to_string(reg->movies.size()) + " movies (" + std::to_string(fresh) + " newly registered) in " +
                std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count()) +
                " ms");
  return reg;
}

}  // namespace vod::server
