// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/metrics_text.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>

namespace vod::metrics {

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

double unix_time_now() { return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count(); }

void Exposition::process(std::string_view prefix, std::string_view program, double start_time) {
  const std::string info = std::string(prefix) + "_info", start = std::string(prefix) + "_start_time_seconds";
  family(info, "gauge", std::string(program) + "'s version, always 1");
  sample(info, {{"version", VOD_VERSION}}, 1);
  family(start, "gauge", "when " + std::string(program) + " started, seconds since the Unix epoch");
  sample(start, start_time);
}

void Exposition::family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  for (char c : help) {  // HELP text escapes \ and newline only
    if (c == '\\') out_ += "\\\\";
    else if (c == '\n') out_ += "\\n";
    else out_ += c;
  }
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += type;
  out_ += '\n';
}

void Exposition::sample(std::string_view name, const Labels& labels, double value) {
  out_ += name;
  if (!labels.empty()) {
    out_ += '{';
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (i) out_ += ',';
      out_ += labels[i].first;
      out_ += "=\"";
      out_ += escape_label_value(labels[i].second);
      out_ += '"';
    }
    out_ += '}';
  }
  char number[40];
  if (std::isnan(value)) std::snprintf(number, sizeof number, "NaN");
  else if (std::isinf(value)) std::snprintf(number, sizeof number, value > 0 ? "+Inf" : "-Inf");
  else if (value == std::floor(value) && std::fabs(value) < 1e18) std::snprintf(number, sizeof number, "%.0f", value);
  else std::snprintf(number, sizeof number, "%.9g", value);
  out_ += ' ';
  out_ += number;
  out_ += '\n';
}

}  // namespace vod::metrics
