// SPDX-License-Identifier: LGPL-2.1-or-later
// What the server has registered on each RDMA device: a PD per device, each movie and its
// index once per device (shared by every catalog generation that lists it), and one catalog region
// per generation and device. Everything is REMOTE_READ only.
//
// Lifetime: a connection holds the CatalogRegistration it was accepted with, which holds its movies'
// registrations, which hold the device. So after a SIGHUP rescan, regions stay registered while any
// connection that received their descriptors is up, and go when the last one does.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cache/segment_cache.hpp"
#include "host_buffer.hpp"
#include "movie_library.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/device.hpp"
#include "vod/rdma/handles.hpp"
#include "windows/isolation.hpp"
#include "windows/rkey_history.hpp"

namespace vod::server {

struct MovieRegistration;

struct Device {
  ibv_context* context = nullptr;  // owned by librdmacm (rdma_get_devices)
  rdma::DeviceLimits limits;
  // With tokens, how a connection is kept to what it was granted (windows/isolation.hpp). With
  // windows the regions are registered for binding only and each client gets windows on its QP; with
  // pd each client registers what it was granted on a PD of its own; either way the catalog lists
  // no rkeys.
  windows::Isolation isolation = windows::Isolation::none;
  rdma::ProtectionDomain pd;   // the device's CQ is the server's CompletionHub's, shared by every QP
  windows::RkeyHistory rkeys;  // window rkeys handed out lately, never handed out again soon
  // The segment cache's arena (--cache-size), registered once on this device: REMOTE_READ, as
  // movies are. Null without a cache, and with windows.
  rdma::MemoryRegion arena;
  // With windows and a cache: the arena registered slot by slot, for binding only. A window over a
  // slot is bound over its slot's region, not a region of the whole arena: rxe checks a window's
  // Reads against the bounds of the region under it, not the window's own (Linux 6.1,
  // rxe_resp.c check_rkey), so one region per slot keeps a window's reads inside its slot there too.
  std::vector<rdma::MemoryRegion> arena_slots;
  std::uint64_t arena_addr = 0, arena_length = 0;
  // The arena as accepts and the catalog describe it: with windows, without an rkey.
  proto::RegionDescriptor arena_region() const noexcept;
  // Registrations still alive for some generation, so a rescan reuses them.
  std::map<const LoadedMovie*, std::weak_ptr<MovieRegistration>> movies;

  // `limits`: the device's, as open_devices queried them to choose its isolation.
  Device(ibv_context* ctx, rdma::DeviceLimits limits, windows::Isolation isolation);
  bool binds_windows() const noexcept { return isolation == windows::Isolation::windows; }
  bool own_pds() const noexcept { return isolation == windows::Isolation::pd; }
  bool isolated() const noexcept { return binds_windows() || own_pds(); }
  // The access the shared regions are registered with: remote Read, window binding only, or (each
  // client with its own PD) none from the network.
  int region_access() const noexcept { return binds_windows() ? IBV_ACCESS_MW_BIND : own_pds() ? 0 : IBV_ACCESS_REMOTE_READ; }
};

struct MovieRegistration {
  std::shared_ptr<Device> device;  // declared first: outlives the MRs below
  std::shared_ptr<const LoadedMovie> movie;
  rdma::MemoryRegion movie_mr;  // a movie served whole; null for a cached one
  rdma::MemoryRegion index_mr;
  rdma::MemoryRegion table_mr;  // a cached movie's segment table

  // The movie's bytes, or for a cached movie the device's arena, where its slots are.
  proto::RegionDescriptor movie_region() const noexcept;
  proto::RegionDescriptor index_region() const noexcept;
  proto::RegionDescriptor segments_region() const noexcept;  // empty unless cached
};

struct CatalogRegistration {
  std::shared_ptr<Device> device;
  std::vector<std::shared_ptr<MovieRegistration>> movies;  // the first entries of the catalog, in its order
  proto::Catalog catalog;
  HostBuffer bytes;
  rdma::MemoryRegion mr;

  proto::RegionDescriptor region() const noexcept;
  // What every accept of this generation carries: generation, max message size, catalog region.
  proto::AcceptData accept_common() const;
  // The accept for movie entry `index` (kNoMovie for catalog only), before the read depth is filled in.
  proto::AcceptData accept_for(std::uint32_t index) const;
};

// Opens the device `ctx` (port `port`) for serving: queries its limits and chooses how it keeps
// each connection to what its token granted (windows/isolation.hpp: `isolation` is --isolation,
// `tokens` whether --auth-secret is on), logging the choice and the limits the server uses.
std::shared_ptr<Device> open_device(ibv_context* ctx, std::uint8_t port, const std::string& isolation, bool tokens);

// Registers the segment cache's arena on a device, once: REMOTE_READ as movies are; with windows,
// slot by slot and for binding only; with a PD per client not at all (each registers the slots it
// asks for on its own PD). Throws when the device has too few memory regions for the slots.
void register_arena(Device& device, const cache::SegmentCache& cache);

// The random number every catalog of this process carries (drawn once, never 0): with the generation
// it names one version of each entry (docs/protocol.md, "Catalog region").
std::uint64_t catalog_instance();

// A movie's catalog entry, with the descriptors of its bytes and its keyframe index (and of its
// segment table, which makes it a segmented entry).
proto::CatalogEntry catalog_entry(const LoadedMovie& movie, const proto::RegionDescriptor& bytes, const proto::RegionDescriptor& index,
                                  const proto::RegionDescriptor& segments = {});

// Registers (or reuses) every movie of `library` on `device`, and builds and registers its catalog:
// the movies, then `extra` entries (the live channels, registered by their own module).
std::shared_ptr<CatalogRegistration> register_library(const std::shared_ptr<Device>& device, const Library& library,
                                                      const std::vector<proto::CatalogEntry>& extra = {});

}  // namespace vod::server
