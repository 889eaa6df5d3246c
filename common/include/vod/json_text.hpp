// SPDX-License-Identifier: LGPL-2.1-or-later
// JSON string escaping, for the proxy's catalog.json and the programs' --log-format json. Written by
// hand: Debian 12's Boost (1.74) predates Boost.JSON, and one escaping loop does not justify another
// library in every program.
#pragma once

#include <string>
#include <string_view>

namespace vod {

// The characters of a JSON string literal for `s`, without the surrounding quotes: " and \ escaped,
// \n \r \t by name, other control characters and DEL as \u00XX; UTF-8 passes through unchanged.
std::string json_escape(std::string_view s);

}  // namespace vod
