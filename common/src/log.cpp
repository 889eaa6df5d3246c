// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/log.hpp"

#include "vod/json_text.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>

namespace vod::log {

namespace {
std::atomic<int> g_minimum{static_cast<int>(Level::info)};
std::atomic<int> g_format{static_cast<int>(Format::text)};

// Each level's word in text lines, its name in JSON, and its sd-daemon(3) priority (LOG_DEBUG 7,
// LOG_INFO 6, LOG_WARNING 4, LOG_ERR 3), indexed by Level.
struct LevelNames {
  const char* text;
  const char* json;
  char priority;
};
constexpr LevelNames kLevels[] = {{"DEBUG", "debug", '7'}, {"INFO", "info", '6'}, {"WARN", "warn", '4'}, {"ERROR", "error", '3'}};
const LevelNames& names(Level l) { return kLevels[static_cast<int>(l)]; }

// systemd sets JOURNAL_STREAM to "device:inode" of the stream it connected stderr to
// (systemd.exec(5)); it is the journal only if stderr is still that stream.
bool stderr_is_journal() {
  const char* env = std::getenv("JOURNAL_STREAM");
  if (env == nullptr) return false;
  unsigned long long dev = 0, ino = 0;
  if (std::sscanf(env, "%llu:%llu", &dev, &ino) != 2) return false;
  struct stat st {};
  if (::fstat(STDERR_FILENO, &st) != 0) return false;
  return static_cast<unsigned long long>(st.st_dev) == dev && static_cast<unsigned long long>(st.st_ino) == ino;
}

std::string now_stamp() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return stamp;
}
}  // namespace

void set_level(Level minimum) noexcept { g_minimum = static_cast<int>(minimum); }
Level level() noexcept { return static_cast<Level>(g_minimum.load()); }

Level parse_level(std::string_view n) {
  if (n == "debug") return Level::debug;
  if (n == "info") return Level::info;
  if (n == "warn") return Level::warn;
  if (n == "error") return Level::error;
  throw std::invalid_argument("unknown log level '" + std::string(n) + "' (debug, info, warn, error)");
}

void set_format(Format format) noexcept { g_format = static_cast<int>(format); }

Format parse_format(std::string_view n) {
  if (n == "text") return Format::text;
  if (n == "json") return Format::json;
  throw std::invalid_argument("unknown log format '" + std::string(n) + "' (text, json)");
}

std::string format_line(Format format, bool journal, std::string_view stamp, Level l, std::string_view component,
                        std::string_view message) {
  std::string line;
  line.reserve(64 + component.size() + message.size());
  if (format == Format::json) {
    line += "{\"time\":\"" + json_escape(stamp) + "\",\"level\":\"" + names(l).json + "\",\"component\":\"" + json_escape(component) +
            "\",\"message\":\"" + json_escape(message) + "\"}";
    return line;
  }
  if (journal) {
    line += '<';
    line += names(l).priority;
    line += '>';
  } else {
    line += stamp;
    line += ' ';
  }
  line += names(l).text;
  line += ' ';
  line += component;
  line += ": ";
  for (char c : message) line += (c == '\n' || c == '\r') ? ' ' : c;  // one event, one line
  return line;
}

void write(Level l, std::string_view component, std::string_view message) {
  if (static_cast<int>(l) < g_minimum.load(std::memory_order_relaxed)) return;
  static const bool journal = stderr_is_journal();
  std::string line =
      format_line(static_cast<Format>(g_format.load(std::memory_order_relaxed)), journal, now_stamp(), l, component, message);
  line += '\n';
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace vod::log
