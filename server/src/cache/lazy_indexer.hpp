// SPDX-License-Identifier: LGPL-2.1-or-later
// Keyframe indexes and content identities of cached movies, built after the server is listening,
// one movie at a time on a thread of their own, and kept in the state directory (IndexStore). A movie is listed at once with
// an index region of its final size marked pending (kIndexPending); its index is written into that
// region in place when ready: the entries, then their CRC, then the count and flags in one aligned
// 8-byte store. No new catalog generation, and clients that read it meanwhile read it again.
// A content identity, and an index once written, are set on the movie on the event loop, and
// `on_found` runs once per batch so the server republishes its catalog (the same generation, with
// the identities filled in and the titles the indexes complete). A
// movie listed unprobed (past the scan's probe budget) is probed first, before any index or digest:
// `on_probed` gets the described copy that replaces it (null when the probe refused the file), and
// the copy's index and identity follow.
//
// Why a thread: building an MPEG-TS index reads the whole file, which the event loop must never
// wait for; one thread, one file at a time, bounds what indexing takes from the disk.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "cache/index_store.hpp"
#include "host_buffer.hpp"
#include "loop/reactor.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server {
struct LoadedMovie;
}

namespace vod::server::cache {

class CacheReader;

// Index entries a cached movie's region holds: one a second of its duration, and some.
std::uint32_t index_capacity(std::uint64_t duration_us) noexcept;
// A region of `capacity` entries holding `index` (thinned to fit), or pending when it is nullopt.
HostBuffer index_region(const std::optional<proto::KeyframeIndex>& index, std::uint64_t movie_size, std::uint32_t capacity);
// Fills a pending region in place with `index` (thinned to fit), publishing it last.
void publish_index(const HostBuffer& region, const proto::KeyframeIndex& index);

class LazyIndexer {
 public:
  // Returns whether the library still listed `listed` (and now lists `described` instead).
  using Probed = std::function<bool(const std::shared_ptr<const LoadedMovie>& listed, std::shared_ptr<const LoadedMovie> described)>;
  LazyIndexer(loop::Reactor& reactor, const IndexStore& store, std::function<void()> on_found = {}, Probed on_probed = {});
  ~LazyIndexer();  // stops the thread (a file being indexed is abandoned)
  LazyIndexer(const LazyIndexer&) = delete;
  LazyIndexer& operator=(const LazyIndexer&) = delete;

  // Queues what `movie` still lacks: its probe (probe_pending, ahead of everything else), its index
  // (index_pending), its identity (content unknown).
  // A movie of an HTTP origin gets its probe here, and its index (MPEG-TS: read whole) only from
  // index_on_first_use, through the segment cache (`reader`, set_cache_reader), so that its fills
  // serve both the index and its viewers.
  void add(std::shared_ptr<const LoadedMovie> movie);
  void index_on_first_use(std::shared_ptr<const LoadedMovie> movie);
  void set_cache_reader(CacheReader* reader) noexcept { cache_reader_ = reader; }
  // Starts indexing (after the server is listening: nothing is read before).
  void start();
  std::size_t queued() const;

 private:
  struct Job {
    std::shared_ptr<const LoadedMovie> movie;
    bool probe = false, index = false, digest = false;
  };
  struct Result {
    Job job;
    std::optional<proto::KeyframeIndex> index;
    proto::ContentId content;
    std::shared_ptr<LoadedMovie> described;  // a probe's
    std::string error;
    double seconds = 0;
  };
  void work(Result& r);
  void work_at_origin(Result& r);
  void run();
  void publish_results();

  loop::Reactor& reactor_;
  const IndexStore& store_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::function<void()> on_found_;
  Probed on_probed_;
  CacheReader* cache_reader_ = nullptr;
  std::deque<Job> to_probe_, to_index_, to_digest_;
  std::deque<Result> done_;
  std::atomic<bool> stop_{false};
  UniqueFd event_;
  loop::Reactor::Registration events_;
  std::thread thread_;
};

}  // namespace vod::server::cache
