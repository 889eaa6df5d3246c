// SPDX-License-Identifier: LGPL-2.1-or-later
// The folders of a catalog: its names are paths ("Films/A (2024)/A (2024).mp4"), and a program that
// shows a library as a tree (vod-mount's directories, vod-proxy's folder pages) asks what one
// folder holds. Built once per catalog generation; lookups do not scan the catalog.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "vod/protocol/catalog_layout.hpp"

namespace vod::client {

class CatalogTree {
 public:
  struct Folder {
    std::map<std::string, std::size_t> folders;  // a sub-folder's own name -> entries at any depth below it
    std::vector<std::size_t> entries;            // indexes into the catalog of the entries right in it, by name
  };

  explicit CatalogTree(const proto::Catalog& catalog);

  // The folder at `path` ("" is the top, "Films/A (2024)" one below it, no '/' at either end), or
  // null when no name lies below it.
  const Folder* folder(std::string_view path) const;
  // The entry named exactly `name`, as an index into the catalog.
  std::optional<std::size_t> entry(std::string_view name) const;

 private:
  std::unordered_map<std::string, Folder> folders_;
  std::unordered_map<std::string, std::size_t> entries_;
};

// The folder a name is in ("" at the top) and its own last part.
std::string_view folder_of(std::string_view name) noexcept;
std::string_view leaf_of(std::string_view name) noexcept;

}  // namespace vod::client
