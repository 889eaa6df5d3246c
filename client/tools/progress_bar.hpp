// Progress of a long operation on stderr: a redrawn bar on a terminal, a log line every 10% otherwise.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace vod::client::cli {

class ProgressBar {
 public:
  ProgressBar(std::string label, std::uint64_t total);
  void update(std::uint64_t done);
  void finish();  // the final line, with the average rate

 private:
  std::string label_;
  std::uint64_t total_;
  bool tty_;
  int last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

std::string human_bytes(double bytes);

}  // namespace vod::client::cli
