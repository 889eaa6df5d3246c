// SPDX-License-Identifier: LGPL-2.1-or-later
#include "origin/origin_http.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace vod::server::origin {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

std::optional<std::uint64_t> number(std::string_view s) {
  if (s.empty() || s.size() > 19) return std::nullopt;
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size()) return std::nullopt;
  return v;
}

bool safe_component(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.size() > 255) return false;
  return std::none_of(name.begin(), name.end(), [](char c) { return c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

}  // namespace

std::string normalise_origin(std::string_view url) {
  std::string_view rest;
  if (url.starts_with("http://")) rest = url.substr(7);
  else if (url.starts_with("https://")) rest = url.substr(8);
  else throw OriginError("--origin " + std::string(url) + ": not an http:// or https:// URL");
  const auto slash = rest.find('/');
  const std::string_view host = rest.substr(0, slash);
  if (host.empty()) throw OriginError("--origin " + std::string(url) + ": no host");
  if (host.find('@') != std::string_view::npos)
    throw OriginError("--origin " + std::string(url) + ": credentials in the URL are not supported");
  if (url.find_first_of("?#") != std::string_view::npos)
    throw OriginError("--origin " + std::string(url) + ": a query or fragment is not a folder");
  if (std::any_of(url.begin(), url.end(), [](char c) { return static_cast<unsigned char>(c) <= 0x20 || c == 0x7f; }))
    throw OriginError("--origin: the URL holds a space or a control byte");
  std::string out(url);
  if (slash == std::string_view::npos || !out.ends_with('/')) out += '/';
  return out;
}

std::string object_url(const std::string& base, std::string_view name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out = base;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out += c;
    } else {
      out += '%';
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

std::vector<ListedEntry> parse_autoindex(std::string_view json, std::size_t max_entries) {
  const auto doc = nlohmann::json::parse(json.begin(), json.end(), nullptr, false);
  if (doc.is_discarded()) throw OriginError("the origin's listing is not JSON (is `autoindex_format json` set?)");
  if (!doc.is_array()) throw OriginError("the origin's listing is not a JSON array");
  if (doc.size() > max_entries) throw OriginError("the origin's listing has more than " + std::to_string(max_entries) + " entries");
  std::vector<ListedEntry> out;
  for (const auto& e : doc) {
    if (!e.is_object()) throw OriginError("an entry of the origin's listing is not an object");
    const auto name = e.find("name");
    const auto type = e.find("type");
    if (name == e.end() || !name->is_string() || type == e.end() || !type->is_string())
      throw OriginError("an entry of the origin's listing has no name or type");
    ListedEntry l;
    l.name = name->get<std::string>();
    if (!safe_component(l.name)) throw OriginError("the origin lists an unsafe name: " + nlohmann::json(l.name).dump());
    const std::string t = type->get<std::string>();
    if (t == "directory") {
      l.directory = true;
    } else if (t == "file") {
      const auto size = e.find("size");
      if (size == e.end() || !size->is_number_unsigned()) throw OriginError("the origin lists " + l.name + " without a size");
      l.size = size->get<std::uint64_t>();
    } else {
      continue;
    }
    if (const auto m = e.find("mtime"); m != e.end() && m->is_string()) l.mtime = m->get<std::string>();
    out.push_back(std::move(l));
  }
  return out;
}

std::optional<std::string> strong_etag(std::string_view value) {
  value = trim(value);
  if (value.size() < 2 || value.front() != '"' || value.back() != '"' || value.size() > 256) return std::nullopt;
  for (const char c : value.substr(1, value.size() - 2)) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || u < 0x21 || u == 0x7f) return std::nullopt;  // RFC 9110 etagc
  }
  return std::string(value);
}

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = trim(value);
  if (!value.starts_with("bytes ")) return std::nullopt;
  value.remove_prefix(6);
  const auto dash = value.find('-'), slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
  ContentRange r;
  const auto first = number(value.substr(0, dash)), last = number(value.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *last < *first) return std::nullopt;
  r.first = *first;
  r.last = *last;
  const std::string_view total = value.substr(slash + 1);
  if (total != "*") {
    r.total = number(total);
    if (!r.total || *r.total <= r.last) return std::nullopt;
  }
  return r;
}

void ResponseHeaders::feed(std::string_view line) {
  if (line.starts_with("HTTP/")) {
    *this = ResponseHeaders{};  // a new response (after a redirect or an interim one)
    const auto sp = line.find(' ');
    if (sp != std::string_view::npos) status = static_cast<long>(number(line.substr(sp + 1, 3)).value_or(0));
    return;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return;
  const std::string_view key = line.substr(0, colon), value = trim(line.substr(colon + 1));
  if (iequals(key, "etag")) {
    etag = strong_etag(value);
    weak_etag = !etag && value.starts_with("W/");
  } else if (iequals(key, "content-range")) {
    content_range = parse_content_range(value);
  } else if (iequals(key, "content-length")) {
    content_length = number(value);
  }
}

FillVerdict judge_fill(const ResponseHeaders& h, std::uint64_t offset, std::uint64_t length, std::uint64_t size, const std::string& etag) {
  if (h.status == 412) return FillVerdict::changed;  // If-Match failed: another version
  if (h.status != 206 || !h.content_range) return FillVerdict::failed;
  if (h.etag && !etag.empty() && *h.etag != etag) return FillVerdict::changed;
  if (h.content_range->total && *h.content_range->total != size) return FillVerdict::changed;
  if (length == 0 || h.content_range->first != offset || h.content_range->last != offset + length - 1) return FillVerdict::failed;
  return FillVerdict::ok;
}

std::optional<std::chrono::milliseconds> retry_after(unsigned failures, std::chrono::milliseconds elapsed, std::chrono::milliseconds budget,
                                                     unsigned attempts) {
  if (failures == 0 || failures >= attempts) return std::nullopt;
  const auto wait = std::min(std::chrono::milliseconds(250) * (1u << std::min(failures - 1, 8u)), std::chrono::milliseconds(2000));
  if (elapsed + wait > budget) return std::nullopt;
  return wait;
}

}  // namespace vod::server::origin
