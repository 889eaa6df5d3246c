// SPDX-License-Identifier: LGPL-2.1-or-later
// What vod-server --origin reads from an HTTP origin, decoded: nginx's autoindex listing
// (autoindex_format json), the response headers of a Range request (Content-Range, ETag), and the
// URLs of objects. Pure functions over the origin's bytes, which are wire data like any client's:
// every one of them refuses what it does not understand with OriginError saying what (fuzz target
// fuzz_origin_http). The retry schedule of a fill is decided here too.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vod::server::origin {

class OriginError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The origin's base: "http://HOST[:PORT]/PATH/" (or https), normalised to end with '/'. Throws
// OriginError for another scheme, a missing host, userinfo, a query or a fragment.
std::string normalise_origin(std::string_view url);

// The URL of `name` (a path below the origin: "Films/A b.mp4") under `base`: every byte outside
// RFC 3986's unreserved set and '/' is percent-encoded.
std::string object_url(const std::string& base, std::string_view name);

// One entry of a directory listing.
struct ListedEntry {
  std::string name;  // one path component: never empty, ".", ".." or holding '/' or a control byte
  bool directory = false;
  std::uint64_t size = 0;  // files only
  std::string mtime;       // as the origin wrote it (nginx: RFC 1123), for change detection
};
// nginx's `autoindex_format json` body: [{"name":..., "type":"file"|"directory"|..., "mtime":...,
// "size":...}, ...]. Entries of other types (symlinks nginx did not resolve, "other") are left out;
// an entry whose name is unsafe is refused, as is a listing of more than `max_entries`.
std::vector<ListedEntry> parse_autoindex(std::string_view json, std::size_t max_entries = 100000);

// A strong entity tag, quotes included ("\"5f3-6a1\""), or nullopt for a weak (W/"...") or
// malformed one. Only a strong tag names bytes exactly (RFC 9110, 8.8.1).
std::optional<std::string> strong_etag(std::string_view value);

// "bytes FIRST-LAST/TOTAL" (RFC 9110, 14.4); TOTAL may be "*" (nullopt).
struct ContentRange {
  std::uint64_t first = 0, last = 0;
  std::optional<std::uint64_t> total;
  bool operator==(const ContentRange&) const = default;
};
std::optional<ContentRange> parse_content_range(std::string_view value);

// The headers of one response that a fill checks, fed one header line at a time as libcurl
// delivers them (a redirect or a 100 Continue starts a new set).
struct ResponseHeaders {
  long status = 0;
  std::optional<std::string> etag;  // strong only
  bool weak_etag = false;
  std::optional<ContentRange> content_range;
  std::optional<std::uint64_t> content_length;
  // Feeds one line ("HTTP/1.1 206 Partial Content", "ETag: ...", "\r\n" at the end).
  void feed(std::string_view line);
};

// What a fill's response says about the bytes asked for: [offset, offset + length) of an object of
// `size` bytes whose strong tag is `etag`.
enum class FillVerdict {
  ok,       // 206 with exactly that range, of that total, and that tag (or none given)
  changed,  // 412, or another tag or total: the object is another version now
  failed,   // anything else (a 5xx, a 200 to a range, a wrong range, a 404): retried, then an error
};
FillVerdict judge_fill(const ResponseHeaders& h, std::uint64_t offset, std::uint64_t length, std::uint64_t size, const std::string& etag);

// The retry schedule of one fill: the wait after `failures` failed attempts (1, 2, ...): 250 ms
// doubling to 2 s, or nullopt when `elapsed` (since the first attempt) plus that wait passes
// `budget` or `attempts` were made. A client's Read deadline is seconds, so the budget is too.
std::optional<std::chrono::milliseconds> retry_after(unsigned failures, std::chrono::milliseconds elapsed, std::chrono::milliseconds budget,
                                                     unsigned attempts = 4);

}  // namespace vod::server::origin
