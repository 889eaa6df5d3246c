// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/udp_regions.hpp"

#include "registrations.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server::udp {

std::shared_ptr<UdpRegions> udp_regions(const Library& library, const std::vector<proto::CatalogEntry>& live) {
  auto r = std::make_shared<UdpRegions>();
  r->generation = library.generation;
  proto::Catalog catalog;
  catalog.generation = library.generation;
  catalog.instance = catalog_instance();
  for (const auto& m : library.movies) {
    catalog.entries.push_back(catalog_entry(*m, {0, m->size(), 0}, {0, m->index_bytes.length(), 0}));
    r->movies[proto::name_hash(m->name)] = {m->bytes.bytes(), m->index_bytes.bytes(), m, m->cached};
  }
  for (const auto& e : live) {
    catalog.entries.push_back(e);
    r->live[proto::name_hash(e.name)] = e.name;
  }
  catalog.titles = library.titles;
  r->catalog = udp_catalog(std::move(catalog));
  return r;
}

}  // namespace vod::server::udp
