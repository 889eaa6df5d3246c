// SPDX-License-Identifier: LGPL-2.1-or-later
// One line per event, with a time, a level and the component: the log format of every rdma-vod
// program. Lines go to stderr with a single write, so lines from threads never interleave.
//   text  2026-11-23T09:27:10.311Z INFO server: listening on ...
//   json  {"time":"2026-11-23T09:27:10.311Z","level":"info","component":"server","message":"..."}
// When stderr is the systemd journal (JOURNAL_STREAM names it), text lines carry the sd-daemon
// priority prefix ("<6>INFO server: ...") and no time, which journald records itself.
#pragma once

#include <string>
#include <string_view>

namespace vod::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };
enum class Format { text = 0, json = 1 };

void set_level(Level minimum) noexcept;
Level level() noexcept;
// Parses "debug", "info", "warn" or "error"; throws std::invalid_argument otherwise.
Level parse_level(std::string_view name);

void set_format(Format format) noexcept;
// Parses "text" or "json"; throws std::invalid_argument otherwise.
Format parse_format(std::string_view name);

// The line write() emits for an event, without the trailing newline: a pure function, for tests.
// `stamp` is the ISO 8601 time; `journal` selects the sd-daemon prefixed form of text.
std::string format_line(Format format, bool journal, std::string_view stamp, Level level, std::string_view component,
                        std::string_view message);

void write(Level level, std::string_view component, std::string_view message);

inline void debug(std::string_view c, std::string_view m) { write(Level::debug, c, m); }
inline void info(std::string_view c, std::string_view m) { write(Level::info, c, m); }
inline void warn(std::string_view c, std::string_view m) { write(Level::warn, c, m); }
inline void error(std::string_view c, std::string_view m) { write(Level::error, c, m); }

}  // namespace vod::log
