// SPDX-License-Identifier: LGPL-2.1-or-later
// Durations and sizes as people write them in options and config files, one parser for each:
//   durations  "90s", "3m", "2h", "1d", "250ms", "1.5h", or plain seconds ("90", "0.5")
//   sizes      "512M", "4G", "1TiB", "65536" (binary units: K, M, G, T; an optional "i" and "B")
// Errors name the option and the text, and say what is expected.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace vod {

// A non-negative duration, at most 100 years. Throws std::invalid_argument.
std::chrono::milliseconds parse_duration(std::string_view text, std::string_view option);

// A byte count. Throws std::invalid_argument.
std::uint64_t parse_size(std::string_view text, std::string_view option);

// "2h", "3m", "90s", "1.5s", "250ms": the shortest of those that says `d` exactly (for logs and --help).
std::string format_duration(std::chrono::milliseconds d);

}  // namespace vod
