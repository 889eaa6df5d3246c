// SPDX-License-Identifier: LGPL-2.1-or-later
// The Prometheus text exposition format (version 0.0.4), written by vod-server's and vod-proxy's
// /metrics. Written by hand: Debian 12 packages no C++ Prometheus client library, and the format is
// a few lines of "# HELP", "# TYPE" and "name{label="value"} number".
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vod::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

inline constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

class Exposition {
 public:
  // Starts a metric family: its HELP and TYPE lines. `type` is counter, gauge or untyped; a
  // counter's name ends in _total.
  void family(std::string_view name, std::string_view type, std::string_view help);
  // One sample of the family begun last (or of a name it owns); values print as integers when whole.
  void sample(std::string_view name, const Labels& labels, double value);
  void sample(std::string_view name, double value) { sample(name, {}, value); }
  // What every rdma-vod program exports first: PREFIX_info{version} 1 and PREFIX_start_time_seconds.
  void process(std::string_view prefix, std::string_view program, double start_time);
  const std::string& text() const noexcept { return out_; }

 private:
  std::string out_;
};

// Now, in seconds since the Unix epoch: a program's start time for process().
double unix_time_now();

// A label value with \, " and newline escaped as the format requires.
std::string escape_label_value(std::string_view value);

}  // namespace vod::metrics
