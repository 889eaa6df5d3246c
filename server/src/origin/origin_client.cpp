// SPDX-License-Identifier: LGPL-2.1-or-later
#include "origin/origin_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <deque>

#include "vod/log.hpp"

namespace vod::server::origin {

struct OriginClient::Easy {
  CURL* handle = curl_easy_init();
  ~Easy() {
    if (handle) curl_easy_cleanup(handle);
  }
};

namespace {
struct Sink {
  std::string body;
  std::size_t max = 0;
  bool overflow = false;
  ResponseHeaders* headers = nullptr;
};
std::size_t on_body(char* data, std::size_t size, std::size_t n, void* p) {
  auto* s = static_cast<Sink*>(p);
  if (s->body.size() + size * n > s->max) {
    s->overflow = true;
    return 0;
  }
  s->body.append(data, size * n);
  return size * n;
}
std::size_t on_header(char* data, std::size_t size, std::size_t n, void* p) {
  static_cast<Sink*>(p)->headers->feed(std::string_view(data, size * n));
  return size * n;
}
}  // namespace

OriginClient::OriginClient(const FetcherOptions& options) : options_(options), easy_(std::make_unique<Easy>()) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  if (!easy_->handle) throw OriginError("curl_easy_init failed");
}

OriginClient::~OriginClient() = default;

std::string OriginClient::perform(const std::string& url, const char* range, std::size_t max_bytes, ResponseHeaders& headers) {
  CURL* e = easy_->handle;
  Sink sink;
  sink.max = max_bytes;
  sink.headers = &headers;
  char error[CURL_ERROR_SIZE] = {};
  curl_easy_reset(e);  // the connection stays in the handle's cache
  curl_easy_setopt(e, CURLOPT_URL, url.c_str());
  if (range) curl_easy_setopt(e, CURLOPT_RANGE, range);
  set_request_options(e, options_, "vod-server (library scan)", error);
  curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &on_body);
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, &on_header);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &sink);
  ++requests_;
  const CURLcode code = curl_easy_perform(e);
  bytes_ += sink.body.size();
  if (sink.overflow) throw OriginError(url + ": the origin sent more than " + std::to_string(max_bytes) + " bytes");
  if (code != CURLE_OK)
    throw OriginError(url + ": " + curl_easy_strerror(code) + (error[0] ? std::string(" (") + error + ")" : std::string()));
  return std::move(sink.body);
}

std::string OriginClient::get(const std::string& url, std::size_t max_bytes) {
  ResponseHeaders h;
  std::string body = perform(url, nullptr, max_bytes, h);
  if (h.status != 200) throw OriginError(url + ": HTTP " + std::to_string(h.status));
  return body;
}

OriginClient::Range OriginClient::range(const std::string& url, std::uint64_t offset, std::uint64_t length) {
  Range r;
  const std::string range = std::to_string(offset) + "-" + std::to_string(offset + length - 1);
  std::string body = perform(url, range.c_str(), static_cast<std::size_t>(length), r.headers);
  if (r.headers.status != 206 || !r.headers.content_range || r.headers.content_range->first != offset || body.size() > length)
    throw OriginError(url + ": HTTP " + std::to_string(r.headers.status) + " to a Range request of bytes " + range +
                      " (an origin must serve byte ranges)");
  r.bytes.assign(body.begin(), body.end());
  return r;
}

std::vector<ListedObject> crawl(OriginClient& client, const std::string& base) {
  constexpr std::size_t kMaxObjects = 100000, kMaxListing = 64u << 20;
  constexpr int kMaxDepth = 16;
  std::vector<ListedObject> out;
  std::deque<std::pair<std::string, int>> folders{{"", 0}};  // name prefix ("A/B/"), depth
  bool top = true;
  while (!folders.empty()) {
    auto [prefix, depth] = std::move(folders.front());
    folders.pop_front();
    std::vector<ListedEntry> entries;
    try {
      entries = parse_autoindex(client.get(object_url(base, prefix), kMaxListing));
    } catch (const OriginError& e) {
      if (top) throw;
      log::warn("origin", "skipping the folder " + prefix + ": " + e.what());
      continue;
    }
    top = false;
    for (auto& e : entries) {
      if (e.name.starts_with('.')) continue;  // hidden, as in a media directory
      if (e.directory) {
        if (depth + 1 < kMaxDepth) folders.emplace_back(prefix + e.name + "/", depth + 1);
        else log::warn("origin", "not listing " + prefix + e.name + "/: folders nest deeper than " + std::to_string(kMaxDepth));
        continue;
      }
      if (out.size() >= kMaxObjects) throw OriginError("the origin lists more than " + std::to_string(kMaxObjects) + " objects");
      out.push_back({prefix + e.name, e.size, e.mtime});
    }
  }
  std::sort(out.begin(), out.end(), [](const ListedObject& a, const ListedObject& b) { return a.name < b.name; });
  return out;
}

RangeSource::RangeSource(OriginClient& client, std::string url, std::uint64_t size, std::size_t block, std::size_t blocks,
                         std::uint64_t budget)
    : client_(client), url_(std::move(url)), size_(size), block_(block), blocks_(std::max<std::size_t>(blocks, 1)), budget_(budget) {}

const std::vector<std::uint8_t>& RangeSource::block_at(std::uint64_t index) {
  for (auto it = kept_.begin(); it != kept_.end(); ++it)
    if (it->first == index) {
      std::rotate(it, it + 1, kept_.end());
      return kept_.back().second;
    }
  const std::uint64_t offset = index * block_;
  const std::uint64_t length = std::min<std::uint64_t>(block_, size_ - offset);
  if (fetched_ + length > budget_) {
    if (fetched_ <= budget_)
      log::warn("origin", url_ + ": its probe read " + std::to_string(budget_ >> 20) + " MiB; it reads no more of it");
    fetched_ = budget_ + 1;
    static const std::vector<std::uint8_t> none;
    return none;  // read_at ends there, as at the end of the object
  }
  fetched_ += length;
  auto r = client_.range(url_, offset, length);
  if (r.headers.content_range && r.headers.content_range->total && *r.headers.content_range->total != size_)
    throw OriginError(url_ + " is " + std::to_string(*r.headers.content_range->total) + " bytes now, not the " + std::to_string(size_) +
                      " listed");
  const std::string tag = r.headers.etag.value_or("");
  if (!read_any_) etag_ = tag;
  else if (tag != etag_) throw OriginError(url_ + " changed while it was probed (ETag " + etag_ + ", then " + tag + ")");
  read_any_ = true;
  if (kept_.size() >= blocks_) kept_.erase(kept_.begin());
  kept_.emplace_back(index, std::move(r.bytes));
  return kept_.back().second;
}

ReadAt keeping_failure(ReadAt read_at, std::string& failure) {
  return [read_at = std::move(read_at), &failure](std::uint64_t offset, std::span<std::uint8_t> dest) -> std::size_t {
    try {
      return read_at(offset, dest);
    } catch (const std::exception& e) {
      if (failure.empty()) failure = e.what();
      throw;
    }
  };
}

ReadAt RangeSource::reader() {
  return keeping_failure([this](std::uint64_t offset, std::span<std::uint8_t> dest) { return read_at(offset, dest); }, failure_);
}

std::size_t RangeSource::read_at(std::uint64_t offset, std::span<std::uint8_t> dest) {
  std::size_t done = 0;
  while (done < dest.size() && offset + done < size_) {
    const std::uint64_t at = offset + done;
    const auto& b = block_at(at / block_);
    const std::size_t in = static_cast<std::size_t>(at % block_);
    if (in >= b.size()) break;
    const std::size_t n = std::min(dest.size() - done, b.size() - in);
    std::memcpy(dest.data() + done, b.data() + in, n);
    done += n;
  }
  return done;
}

}  // namespace vod::server::origin
