// SPDX-License-Identifier: LGPL-2.1-or-later
// Blocking HTTP to the origin, for what the library scan reads (vod-server --origin): directory
// listings, and the ranges a probe or a container index asks for. One libcurl easy handle, so one
// kept-alive connection; used by one thread at a time (the scan's). Segment fills do not come here:
// they go through origin_fetcher.hpp, off the event loop.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "origin/origin_fetcher.hpp"
#include "origin/origin_http.hpp"

namespace vod::server::origin {

class OriginClient {
 public:
  explicit OriginClient(const FetcherOptions& options);
  ~OriginClient();
  OriginClient(const OriginClient&) = delete;
  OriginClient& operator=(const OriginClient&) = delete;

  // The body of a 200 response, at most `max_bytes`. Throws OriginError naming the URL and why.
  std::string get(const std::string& url, std::size_t max_bytes);
  struct Range {
    std::vector<std::uint8_t> bytes;
    ResponseHeaders headers;
  };
  // Bytes [offset, offset + length) of `url` (a 206 with that range). Throws OriginError.
  Range range(const std::string& url, std::uint64_t offset, std::uint64_t length);
  std::uint64_t bytes_fetched() const noexcept { return bytes_; }
  std::uint64_t requests() const noexcept { return requests_; }

 private:
  struct Easy;
  std::string perform(const std::string& url, const char* range, std::size_t max_bytes, ResponseHeaders& headers);
  FetcherOptions options_;
  std::unique_ptr<Easy> easy_;
  std::uint64_t bytes_ = 0, requests_ = 0;
};

// A listed object of the origin: its name below the origin (folders joined with '/').
struct ListedObject {
  std::string name;
  std::uint64_t size = 0;
  std::string mtime;
};
// Every non-hidden file below `base` (nginx autoindex_format json), folders at most 16 deep and
// 100000 objects. Throws OriginError when `base` itself cannot be listed; a folder that cannot be
// is skipped with a warning.
std::vector<ListedObject> crawl(OriginClient& client, const std::string& base);

// `read_at` for a demuxer, which sees a throw only as an I/O error: the first reason is kept in
// `failure`, so the caller does not take the demuxer's verdict for the object's.
using ReadAt = std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)>;
ReadAt keeping_failure(ReadAt read_at, std::string& failure);

// Bytes of one object read by ranges of `block` bytes, the last `blocks` of them kept: what a probe
// and a container index read (headers, a moov, Cues) costs a few requests, not the object. The
// first response's strong ETag is the version read; a later response of another version throws.
class RangeSource {
 public:
  // A probe of an object that is not what it claims could read it many times over (libavformat tries
  // format after format): past `budget` bytes fetched, reads end as at the end of the object.
  RangeSource(OriginClient& client, std::string url, std::uint64_t size, std::size_t block = 256 << 10, std::size_t blocks = 16,
              std::uint64_t budget = 64ull << 20);
  std::size_t read_at(std::uint64_t offset, std::span<std::uint8_t> dest);
  // read_at for a demuxer, keeping_failure() in failure().
  ReadAt reader();
  const std::string& failure() const noexcept { return failure_; }
  const std::string& etag() const noexcept { return etag_; }  // after the first read; empty when the origin gives no strong tag
  bool read_any() const noexcept { return read_any_; }

 private:
  const std::vector<std::uint8_t>& block_at(std::uint64_t index);
  OriginClient& client_;
  std::string url_;
  std::uint64_t size_;
  std::size_t block_, blocks_;
  std::uint64_t budget_, fetched_ = 0;
  std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> kept_;  // most recent last
  std::string etag_, failure_;
  bool read_any_ = false;
};

}  // namespace vod::server::origin
