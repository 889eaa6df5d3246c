#include "progress_bar.hpp"

#include <unistd.h>

#include <cstdio>

#include "vod/log.hpp"

namespace vod::client::cli {

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

ProgressBar::ProgressBar(std::string label, std::uint64_t total)
    : label_(std::move(label)), total_(total), tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::update(std::uint64_t done) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double fraction = total_ ? static_cast<double>(done) / static_cast<double>(total_) : 1.0;
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  if (tty_) {
    if (now - last_draw_ < std::chrono::milliseconds(100) && done < total_) return;
    last_draw_ = now;
    const int width = 30, filled = static_cast<int>(fraction * width);
    const double eta = rate > 0 ? static_cast<double>(total_ - done) / rate : 0;
    std::fprintf(stderr, "\r%s [%.*s%*s] %3.0f%% %s/s ETA %.0fs ", label_.c_str(), filled, "##############################", width - filled,
                 "", fraction * 100, human_bytes(rate).c_str(), eta);
    return;
  }
  const int decile = static_cast<int>(fraction * 10);
  if (decile != last_decile_) {
    last_decile_ = decile;
    log::info("vod-client", label_ + ": " + std::to_string(decile * 10) + "% (" + human_bytes(static_cast<double>(done)) + " of " +
                                human_bytes(static_cast<double>(total_)) + ", " + human_bytes(rate) + "/s)");
  }
}

void ProgressBar::finish() {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (tty_) std::fprintf(stderr, "\n");
  std::fprintf(stderr, "%s: %s in %.2f s (%s/s)\n", label_.c_str(), human_bytes(static_cast<double>(total_)).c_str(), elapsed,
               human_bytes(elapsed > 0 ? static_cast<double>(total_) / elapsed : 0).c_str());
}

}  // namespace vod::client::cli
