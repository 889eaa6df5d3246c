// SPDX-License-Identifier: LGPL-2.1-or-later
#include "origin/origin_fetcher.hpp"

#include <curl/curl.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

#include "origin/origin_http.hpp"
#include "vod/log.hpp"

namespace vod::server::origin {

using Clock = std::chrono::steady_clock;

struct OriginFetcher::Job {
  std::string url, etag;
  std::uint64_t offset = 0, length = 0, size = 0;
  std::uint8_t* dest = nullptr;
  Done done;
  unsigned failures = 0;
  Clock::time_point first{}, due{};
  std::string last_error;
};

struct OriginFetcher::Transfer {
  Job job;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> easy{nullptr, &curl_easy_cleanup};
  curl_slist* headers = nullptr;
  ResponseHeaders response;
  std::uint64_t written = 0;
  bool overflow = false;
  char error[CURL_ERROR_SIZE] = {};
  ~Transfer() { curl_slist_free_all(headers); }
  void setup(const FetcherOptions& options);

  static std::size_t on_header(char* data, std::size_t size, std::size_t n, void* self) {
    static_cast<Transfer*>(self)->response.feed(std::string_view(data, size * n));
    return size * n;
  }
  static std::size_t on_body(char* data, std::size_t size, std::size_t n, void* self) {
    auto* t = static_cast<Transfer*>(self);
    const std::size_t bytes = size * n;
    if (t->response.status != 206) return bytes;  // an error page or a whole object: judged, never written
    if (t->written + bytes > t->job.length) {
      t->overflow = true;
      return 0;  // more than asked for: libcurl ends the transfer (CURLE_WRITE_ERROR)
    }
    std::memcpy(t->job.dest + t->written, data, bytes);
    t->written += bytes;
    return bytes;
  }
};

void set_request_options(void* easy, const FetcherOptions& options, const char* agent, char* error) {
  CURL* e = easy;
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(options.attempt_timeout.count()));
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(e, CURLOPT_USERAGENT, agent);
  if (!options.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, options.ca_file.c_str());
}

// One attempt's request: exactly the range, If-Match with the tag listed, bounded in time.
void OriginFetcher::Transfer::setup(const FetcherOptions& options) {
  Transfer& t = *this;
  CURL* e = t.easy.get();
  const std::string range = std::to_string(t.job.offset) + "-" + std::to_string(t.job.offset + t.job.length - 1);
  curl_easy_setopt(e, CURLOPT_URL, t.job.url.c_str());
  curl_easy_setopt(e, CURLOPT_RANGE, range.c_str());  // copied by libcurl
  set_request_options(e, options, "vod-server (segment fill)", t.error);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &Transfer::on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &Transfer::on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &t);
  if (!t.job.etag.empty()) {
    t.headers = curl_slist_append(nullptr, ("If-Match: " + t.job.etag).c_str());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, t.headers);
  }
}

struct OriginFetcher::Multi {
  CURLM* handle = curl_multi_init();
  ~Multi() {
    if (handle) curl_multi_cleanup(handle);
  }
};

OriginFetcher::OriginFetcher(loop::Reactor& reactor, FetcherOptions options)
    : reactor_(reactor), options_(std::move(options)), multi_(std::make_unique<Multi>()) {
  curl_global_init(CURL_GLOBAL_DEFAULT);  // reference-counted; idempotent after the first
  if (!multi_->handle) throw std::runtime_error("curl_multi_init failed");
  curl_multi_setopt(multi_->handle, CURLMOPT_MAX_HOST_CONNECTIONS, options_.max_connections);
  curl_multi_setopt(multi_->handle, CURLMOPT_MAX_TOTAL_CONNECTIONS, options_.max_connections);
  event_ = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!event_) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  events_ = reactor_.add(event_.get(), [this] { reap(); });
  thread_ = std::thread([this] { run(); });
}

OriginFetcher::~OriginFetcher() {
  stop_ = true;
  curl_multi_wakeup(multi_->handle);
  if (thread_.joinable()) thread_.join();
}

void OriginFetcher::fetch(std::string url, std::uint64_t offset, std::uint64_t length, std::uint64_t size, std::string etag,
                          std::uint8_t* dest, Done done) {
  Job j;
  j.url = std::move(url);
  j.etag = std::move(etag);
  j.offset = offset;
  j.length = length;
  j.size = size;
  j.dest = dest;
  j.done = std::move(done);
  j.first = j.due = Clock::now();
  {
    std::lock_guard lock(mutex_);
    queued_.push_back(std::move(j));
  }
  curl_multi_wakeup(multi_->handle);
}

void OriginFetcher::reap() {
  std::uint64_t ignored;
  (void)!read(event_.get(), &ignored, sizeof ignored);
  std::deque<std::pair<Done, FetchResult>> results;
  {
    std::lock_guard lock(mutex_);
    results.swap(done_);
  }
  for (auto& [done, result] : results) done(result);
}

void OriginFetcher::run() {
  CURLM* multi = multi_->handle;
  std::vector<Job> retrying;                                       // waiting for their due time
  std::unordered_map<CURL*, std::unique_ptr<Transfer>> transfers;  // under way
  // When a fill last failed for good: for 10 s after, a failed attempt is not retried, so a dead
  // origin costs each viewer one attempt, not the whole backoff, and is not hammered.
  std::optional<Clock::time_point> gave_up;
  auto finish = [&](Job& j, FetchResult r) {
    {
      std::lock_guard lock(mutex_);
      done_.emplace_back(std::move(j.done), std::move(r));
    }
    const std::uint64_t one = 1;
    (void)!write(event_.get(), &one, sizeof one);
  };
  auto start = [&](Job j) {
    auto t = std::make_unique<Transfer>();
    t->job = std::move(j);
    t->easy.reset(curl_easy_init());
    if (!t->easy) return finish(t->job, {FetchResult::Outcome::failed, "curl_easy_init failed", t->job.failures});
    CURL* e = t->easy.get();
    t->setup(options_);
    if (curl_multi_add_handle(multi, e) != CURLM_OK)
      return finish(t->job, {FetchResult::Outcome::failed, "curl_multi_add_handle failed", t->job.failures});
    transfers.emplace(e, std::move(t));
  };
  // An attempt ended: deliver it, or retry it after its backoff, or give up naming why.
  auto ended = [&](std::unique_ptr<Transfer> t, CURLcode code) {
    Job& j = t->job;
    std::string why;
    if (code != CURLE_OK && !t->overflow) {
      why = std::string(curl_easy_strerror(code)) + (t->error[0] ? std::string(": ") + t->error : "");
    } else {
      switch (judge_fill(t->response, j.offset, j.length, j.size, j.etag)) {
        case FillVerdict::changed:
          return finish(j, {FetchResult::Outcome::changed,
                            j.url + " changed at the origin (HTTP " + std::to_string(t->response.status) +
                                (t->response.etag ? ", ETag " + *t->response.etag : "") + "; listed as ETag " + j.etag + ")",
                            j.failures + 1});
        case FillVerdict::ok:
          if (t->written == j.length && !t->overflow) {
            gave_up.reset();  // the origin delivers again
            return finish(j, {FetchResult::Outcome::ok, {}, j.failures + 1});
          }
          why =
              "the origin sent " + std::string(t->overflow ? "more" : std::to_string(t->written)) + " bytes of " + std::to_string(j.length);
          break;
        case FillVerdict::failed:
          why = "HTTP " + std::to_string(t->response.status) + (t->response.status == 206 ? " with another range than asked for" : "");
          break;
      }
    }
    ++j.failures;
    const auto now = Clock::now();
    const bool origin_down = gave_up && now - *gave_up < std::chrono::seconds(10);
    if (auto wait = origin_down
                        ? std::nullopt
                        : retry_after(j.failures, std::chrono::duration_cast<std::chrono::milliseconds>(now - j.first), options_.budget)) {
      log::warn("origin", "fill of " + j.url + " bytes " + std::to_string(j.offset) + "+" + std::to_string(j.length) + " failed (" + why +
                              "); retrying in " + std::to_string(wait->count()) + " ms");
      j.due = now + *wait;
      j.last_error = why;
      retrying.push_back(std::move(j));
      return;
    }
    gave_up = now;
    finish(j, {FetchResult::Outcome::failed,
               "the origin did not deliver " + j.url + " (" + why + ", " + std::to_string(j.failures) + " attempts)", j.failures});
  };

  while (!stop_) {
    std::deque<Job> fresh;
    {
      std::lock_guard lock(mutex_);
      fresh.swap(queued_);
    }
    for (auto& j : fresh) start(std::move(j));
    const auto now = Clock::now();
    auto next_due = now + std::chrono::milliseconds(500);
    for (auto it = retrying.begin(); it != retrying.end();) {
      if (it->due <= now) {
        Job j = std::move(*it);
        it = retrying.erase(it);
        start(std::move(j));
      } else {
        next_due = std::min(next_due, it->due);
        ++it;
      }
    }
    int running = 0;
    curl_multi_perform(multi, &running);
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(multi, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      auto it = transfers.find(msg->easy_handle);
      if (it == transfers.end()) continue;
      auto t = std::move(it->second);
      transfers.erase(it);
      const CURLcode code = msg->data.result;
      curl_multi_remove_handle(multi, t->easy.get());
      ended(std::move(t), code);
    }
    const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next_due - Clock::now()).count();
    curl_multi_poll(multi, nullptr, 0, static_cast<int>(std::clamp<long long>(wait_ms, 0, 500)), nullptr);
  }
  for (auto& [easy, t] : transfers) curl_multi_remove_handle(multi, easy);
}

}  // namespace vod::server::origin
