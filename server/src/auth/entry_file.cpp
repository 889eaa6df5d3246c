// SPDX-License-Identifier: LGPL-2.1-or-later
#include "auth/entry_file.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace vod::server::auth {

void for_each_entry(const std::filesystem::path& file, const std::string& what,
                    const std::function<void(const std::vector<std::string>& fields, const std::string& where)>& entry) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read the " + what + " " + file.string());
  std::string line;
  for (unsigned number = 1; std::getline(in, line); ++number) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    if (!fields.empty()) entry(fields, file.string() + ":" + std::to_string(number) + ": ");
  }
}

std::optional<std::uint8_t> parse_key_id(const std::string& text) {
  if (text.empty() || text.size() > 3 || text.find_first_not_of("0123456789") != std::string::npos || std::stoul(text) > 255)
    return std::nullopt;
  return static_cast<std::uint8_t>(std::stoul(text));
}

}  // namespace vod::server::auth
