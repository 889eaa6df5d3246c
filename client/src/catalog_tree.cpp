// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/catalog_tree.hpp"

#include <algorithm>

#include "vod/protocol/live_window.hpp"

namespace vod::client {

std::string_view folder_of(std::string_view name) noexcept {
  const auto slash = name.rfind('/');
  return slash == name.npos ? std::string_view{} : name.substr(0, slash);
}

std::string_view leaf_of(std::string_view name) noexcept {
  const auto slash = name.rfind('/');
  return slash == name.npos ? name : name.substr(slash + 1);
}

CatalogTree::CatalogTree(const proto::Catalog& catalog) {
  folders_[""];  // the top exists even when the catalog is empty
  for (std::size_t i = 0; i < catalog.entries.size(); ++i) {
    const std::string& name = catalog.entries[i].name;
    if (proto::window_channel(name)) continue;  // a live channel's DVR window is read through its channel, not browsed
    entries_.emplace(name, i);
    folders_[std::string(folder_of(name))].entries.push_back(i);
    // Each folder on the way down counts the entry below it.
    for (std::size_t from = 0, slash; (slash = name.find('/', from)) != std::string::npos; from = slash + 1) {
      const std::string parent = name.substr(0, from == 0 ? 0 : from - 1);
      ++folders_[parent].folders[name.substr(from, slash - from)];
      folders_[name.substr(0, slash)];
    }
  }
  for (auto& [path, f] : folders_)
    std::sort(f.entries.begin(), f.entries.end(),
              [&](std::size_t a, std::size_t b) { return catalog.entries[a].name < catalog.entries[b].name; });
}

const CatalogTree::Folder* CatalogTree::folder(std::string_view path) const {
  const auto it = folders_.find(std::string(path));
  return it == folders_.end() ? nullptr : &it->second;
}

std::optional<std::size_t> CatalogTree::entry(std::string_view name) const {
  const auto it = entries_.find(std::string(name));
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

}  // namespace vod::client
