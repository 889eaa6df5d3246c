// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/byte_range.hpp"

#include <algorithm>
#include <optional>

namespace vod::client {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Digits only; nullopt for an empty string, another character, or a value above 2^63.
std::optional<std::uint64_t> number(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

struct Span {
  bool satisfiable;
  std::uint64_t first, length;
};

// One byte-range-spec or suffix-range; nullopt when it is invalid.
std::optional<Span> spec(std::string_view s, std::uint64_t size) {
  s = trim(s);
  const auto dash = s.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  const std::string_view a = s.substr(0, dash), b = s.substr(dash + 1);
  if (a.empty()) {  // suffix: the last N bytes
    auto n = number(b);
    if (!n) return std::nullopt;
    if (*n == 0 || size == 0) return Span{false, 0, 0};
    const std::uint64_t len = std::min(*n, size);
    return Span{true, size - len, len};
  }
  auto first = number(a);
  if (!first) return std::nullopt;
  std::uint64_t last = UINT64_MAX;
  if (!b.empty()) {
    auto l = number(b);
    if (!l || *l < *first) return std::nullopt;
    last = *l;
  }
  if (*first >= size) return Span{false, 0, 0};
  last = std::min(last, size - 1);
  return Span{true, *first, last - *first + 1};
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return (x | 0x20) == (y | 0x20); });
}

}  // namespace

RangeDecision decide_range(std::string_view header, std::uint64_t size) noexcept {
  using Kind = RangeDecision::Kind;
  header = trim(header);
  if (header.empty()) return {};
  const auto eq = header.find('=');
  if (eq == std::string_view::npos) return {Kind::invalid};
  if (!iequals(trim(header.substr(0, eq)), "bytes")) return {};  // an unknown unit is ignored
  std::string_view list = header.substr(eq + 1);
  int specs = 0, satisfiable = 0;
  Span one{false, 0, 0};
  while (true) {
    const auto comma = list.find(',');
    const std::string_view item = trim(list.substr(0, comma));
    if (!item.empty()) {  // RFC 9110 allows empty list elements
      auto s = spec(item, size);
      if (!s) return {Kind::invalid};
      ++specs;
      if (s->satisfiable) {
        ++satisfiable;
        one = *s;
      }
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  if (specs == 0) return {Kind::invalid};
  if (satisfiable == 0) return {Kind::unsatisfiable};
  if (specs == 1) return {Kind::single, one.first, one.length};
  return {Kind::multiple};
}

}  // namespace vod::client
