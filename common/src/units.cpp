// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/units.hpp"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace vod {

namespace {

[[noreturn]] void refuse(std::string_view option, std::string_view text, std::string_view why) {
  throw std::invalid_argument(std::string(option) + ": '" + std::string(text) + "' " + std::string(why));
}

// The leading decimal number of `text` (digits, one optional fraction), and where it ends. Written
// out rather than with std::from_chars for double, which does not take the locale but accepts
// "inf", exponents and a sign, none of which an option should.
bool leading_number(std::string_view text, double& value, std::size_t& used) {
  used = 0;
  bool digits = false, point = false;
  while (used < text.size()) {
    const char c = text[used];
    if (c >= '0' && c <= '9') digits = true;
    else if (c == '.' && !point) point = true;
    else break;
    ++used;
  }
  if (!digits) return false;
  const auto r = std::from_chars(text.data(), text.data() + used, value);
  return r.ec == std::errc() && r.ptr == text.data() + used;
}

}  // namespace

std::chrono::milliseconds parse_duration(std::string_view text, std::string_view option) {
  double n = 0;
  std::size_t used = 0;
  if (!leading_number(text, n, used)) refuse(option, text, "is not a duration (e.g. 90s, 3m, 2h, or seconds)");
  const std::string_view unit = text.substr(used);
  double ms_per = 0;
  if (unit.empty() || unit == "s") ms_per = 1e3;
  else if (unit == "ms") ms_per = 1;
  else if (unit == "m" || unit == "min") ms_per = 60e3;
  else if (unit == "h") ms_per = 3600e3;
  else if (unit == "d") ms_per = 86400e3;
  else refuse(option, text, "has an unknown unit (ms, s, m, h or d)");
  const double ms = std::round(n * ms_per);
  constexpr double kMax = 100.0 * 365 * 86400e3;
  if (!(ms <= kMax)) refuse(option, text, "is longer than 100 years");
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
}

std::uint64_t parse_size(std::string_view text, std::string_view option) {
  std::uint64_t n = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), n);
  if (r.ec == std::errc::result_out_of_range) refuse(option, text, "is too large");
  if (r.ec != std::errc() || r.ptr == text.data()) refuse(option, text, "is not a size (e.g. 512M, 4G)");
  std::string unit(r.ptr, text.data() + text.size());
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() == 2 && (unit[1] == 'i' || unit[1] == 'I')) unit.pop_back();
  int shift = 0;
  if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (unit == "T" || unit == "t") shift = 40;
  else if (!unit.empty()) refuse(option, text, "has an unknown unit (K, M, G or T)");
  if (shift && n > (~0ull >> shift)) refuse(option, text, "is too large");
  return n << shift;
}

std::string format_duration(std::chrono::milliseconds d) {
  const auto ms = d.count();
  if (ms != 0 && ms % 3'600'000 == 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms != 0 && ms % 60'000 == 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  if (ms >= 1000) {
    std::string s = std::to_string(ms / 1000) + "." + std::to_string(1000 + ms % 1000).substr(1);
    while (s.back() == '0') s.pop_back();
    return s + "s";
  }
  return std::to_string(ms) + "ms";
}

}  // namespace vod
