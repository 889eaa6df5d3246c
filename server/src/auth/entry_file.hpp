// SPDX-License-Identifier: LGPL-2.1-or-later
// The operator's access-control files (--auth-secret, --revoked): one entry per line of
// whitespace-separated fields, blank lines and '#' comments ignored, every error naming the file
// and line. One reader for both, so that they cannot come to disagree on the format.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vod::server::auth {

// Calls `entry` with the fields of each line that has any and the "FILE:LINE: " prefix for its
// errors. Throws std::runtime_error when the file cannot be read ("cannot read the WHAT FILE").
void for_each_entry(const std::filesystem::path& file, const std::string& what,
                    const std::function<void(const std::vector<std::string>& fields, const std::string& where)>& entry);

// A key id, 0..255; nullopt for anything else.
std::optional<std::uint8_t> parse_key_id(const std::string& text);

}  // namespace vod::server::auth
