#include "vod/log.hpp"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <stdexcept>

namespace vod::log {

namespace {
std::atomic<int> g_minimum{static_cast<int>(Level::info)};

const char* name(Level l) {
  switch (l) {
    case Level::debug: return "DEBUG";
    case Level::info: return "INFO";
    case Level::warn: return "WARN";
    case Level::error: return "ERROR";
  }
  return "?";
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

void write(Level l, std::string_view component, std::string_view message) {
  if (static_cast<int>(l) < g_minimum.load(std::memory_order_relaxed)) return;
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char stamp[64];
  std::snprintf(stamp, sizeof stamp, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
                tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  std::string line;
  line.reserve(48 + component.size() + message.size());
  line += stamp;
  line += ' ';
  line += name(l);
  line += ' ';
  line += component;
  line += ": ";
  for (char c : message) line += (c == '\n' || c == '\r') ? ' ' : c;  // one event, one line
  line += '\n';
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

}  // namespace vod::log
