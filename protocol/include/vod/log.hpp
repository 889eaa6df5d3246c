// One line per event, with a time, a level and the component: the log format of every rdma-vod
// program. Lines go to stderr with a single write, so lines from threads never interleave.
#pragma once

#include <string>
#include <string_view>

namespace vod::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };

void set_level(Level minimum) noexcept;
Level level() noexcept;
// Parses "debug", "info", "warn" or "error"; throws std::invalid_argument otherwise.
Level parse_level(std::string_view name);

void write(Level level, std::string_view component, std::string_view message);

inline void debug(std::string_view c, std::string_view m) { write(Level::debug, c, m); }
inline void info(std::string_view c, std::string_view m) { write(Level::info, c, m); }
inline void warn(std::string_view c, std::string_view m) { write(Level::warn, c, m); }
inline void error(std::string_view c, std::string_view m) { write(Level::error, c, m); }

}  // namespace vod::log
