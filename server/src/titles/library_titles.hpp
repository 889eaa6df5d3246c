// SPDX-License-Identifier: LGPL-2.1-or-later
// The titles of a library, as the catalog lists them: group_titles over what the server knows of
// each movie, with one log line each time a folder becomes a title, stops being one, or is refused
// for a new reason (not every republish).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "movie_library.hpp"
#include "vod/protocol/catalog_titles.hpp"

namespace vod::server::titles {

class LibraryTitles {
 public:
  // Entry indexes are positions in library.movies, which is where the catalog lists them.
  std::vector<proto::Title> update(const Library& library);

 private:
  std::map<std::string, std::string> said_;  // folder: what was last logged of it
};

}  // namespace vod::server::titles
