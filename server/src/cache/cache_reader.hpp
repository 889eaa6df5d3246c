// SPDX-License-Identifier: LGPL-2.1-or-later
// Segments of a cached movie read by another thread through the segment cache: the indexing thread
// builds an MPEG-TS index of a movie of the origin (which keeps no index of its own) from the same
// fills its viewers get, so the origin sends each segment once, for both. The thread asks; the
// event loop requests the segment from the cache (a fault like a viewer's, collapsed with theirs)
// and copies it out once resident; the thread waits, checking `stop`.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "cache/segment_cache.hpp"
#include "loop/reactor.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::cache {

class CacheReader {
 public:
  CacheReader(loop::Reactor& reactor, SegmentCache& cache);
  CacheReader(const CacheReader&) = delete;
  CacheReader& operator=(const CacheReader&) = delete;

  // From any thread but the loop's: segment `segment` of `file`, copied. Throws std::runtime_error
  // with the cache's answer when it cannot be read, or what `stop` throws (asked every 100 ms).
  std::vector<std::uint8_t> segment(const std::shared_ptr<CachedFile>& file, std::uint32_t segment, const std::function<void()>& stop);

  // A ByteSource's read_at over `file` (one segment kept), for a demuxer on that thread.
  std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)> reader(std::shared_ptr<CachedFile> file, std::function<void()> stop);

 private:
  struct Ask {
    std::shared_ptr<CachedFile> file;
    std::uint32_t segment = 0;
    bool done = false;
    std::vector<std::uint8_t> bytes;
    std::string error;
  };
  void serve();  // on the loop: the asks queued since

  loop::Reactor& reactor_;
  SegmentCache& cache_;
  UniqueFd event_;
  loop::Reactor::Registration events_;
  std::mutex mutex_;
  std::condition_variable answered_;
  std::deque<std::shared_ptr<Ask>> asks_;
};

}  // namespace vod::server::cache
