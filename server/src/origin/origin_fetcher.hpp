// SPDX-License-Identifier: LGPL-2.1-or-later
// Segment fills from an HTTP origin (vod-server --origin): each one an HTTP Range request of exactly
// the bytes asked for, written straight into the arena slot the segment cache took for it.
//
// libcurl's multi interface runs on a thread of its own: it keeps the origin's connections alive
// across fills (at most `max_connections` to the origin), and a slow or dead origin never holds the
// server's event loop, so hits on resident segments, the live channels and every other connection
// go on. Completions come back to the loop through an eventfd, as the disk's do. A fill sends
// If-Match with the object's strong ETag, and checks the tag, range and total that come back
// (origin_http.hpp's judge_fill): a fill of another version of the object is reported as changed,
// never delivered. Failed attempts are retried with backoff within `budget` (retry_after); then the
// fill fails with the origin's URL and the reason.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "loop/reactor.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::origin {

struct FetcherOptions {
  std::chrono::milliseconds connect_timeout{3000};
  std::chrono::milliseconds attempt_timeout{8000};  // one request, from start to last byte
  std::chrono::milliseconds budget{12000};          // every attempt of one fill, backoff included
  long max_connections = 8;                         // to the origin, at once
  std::string ca_file;                              // --origin-cacert: the CAs an https origin is checked against (else the system's)
};

struct FetchResult {
  enum class Outcome { ok, changed, failed };
  Outcome outcome = Outcome::failed;
  std::string error;      // changed or failed: the URL and the reason
  unsigned attempts = 0;  // requests made (1 + retries)
};

// The settings every request to the origin has, fills and scans alike: http and https only, no
// signals, `options`' timeouts and CAs, and `agent` as its User-Agent; libcurl's message lands in
// `error` (CURL_ERROR_SIZE bytes).
void set_request_options(void* easy, const FetcherOptions& options, const char* agent, char* error);

class OriginFetcher {
 public:
  using Done = std::function<void(const FetchResult&)>;

  OriginFetcher(loop::Reactor& reactor, FetcherOptions options);
  // Ends every transfer (their `done` never runs) and joins the thread: destroy it before the memory
  // its fills write into.
  ~OriginFetcher();
  OriginFetcher(const OriginFetcher&) = delete;
  OriginFetcher& operator=(const OriginFetcher&) = delete;

  // Fills dest[0, length) with bytes [offset, offset + length) of the object at `url`, of `size`
  // bytes, whose strong tag is `etag` (empty: none known, no If-Match). `done` runs on the loop's
  // thread. `dest` must stay valid until then (or until the fetcher is destroyed).
  void fetch(std::string url, std::uint64_t offset, std::uint64_t length, std::uint64_t size, std::string etag, std::uint8_t* dest,
             Done done);

 private:
  struct Job;
  struct Transfer;
  struct Multi;
  void run();
  void reap();

  loop::Reactor& reactor_;
  FetcherOptions options_;
  std::unique_ptr<Multi> multi_;
  UniqueFd event_;
  loop::Reactor::Registration events_;
  std::mutex mutex_;
  std::deque<Job> queued_;                         // fetch() -> the thread
  std::deque<std::pair<Done, FetchResult>> done_;  // the thread -> reap()
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace vod::server::origin
