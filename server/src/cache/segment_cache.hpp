// SPDX-License-Identifier: LGPL-2.1-or-later
// The segment cache: one arena of fixed-size slots, registered once per device, that cached movies'
// segments are read into from disk on demand. Clients Read resident segments one-sidedly; the
// server's CPU works only for what they ask for (a fault, a read-ahead, a touch).
//
// request() answers when the segment is resident (at once when it is), or when it cannot be. A
// fault takes a free slot (SlotTable decides which, and what to evict ahead), reads the segment
// into it with io_uring (DiskReader), then publishes its entry: the slot's bytes are complete
// before any client can learn where they are. An eviction publishes the entry absent (a new
// generation) before the slot's quarantine starts.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/cached_file.hpp"
#include "cache/disk_reader.hpp"
#include "cache/fd_cache.hpp"
#include "cache/slot_table.hpp"
#include "host_buffer.hpp"
#include "loop/reactor.hpp"
#include "origin/origin_fetcher.hpp"

namespace vod::server::cache {

struct CacheOptions {
  std::uint64_t cache_size = 0;  // the arena's bytes (a whole number of slots)
  std::uint32_t segment_size = 4u << 20;
  Clock::duration grace = std::chrono::seconds(2);
  Clock::duration read_deadline = std::chrono::seconds(3);
  std::uint16_t request_credits = 16;
  unsigned disk_depth = 32;  // disk reads in flight at most
  // Clients read slots one-sided (RDMA): an evicted slot is quarantined past their Read deadline
  // before it is refilled. Without (vod-server --no-rdma: only the server's UDP sender reads slots,
  // within a turn of its loop) a slot is refilled at once; a quarantine of 3.5 s there held a
  // 16-slot cache to 16 segments per 3.5 s.
  bool remote_readers = true;
  // vod-server --origin: files with an origin() are filled by HTTP Range requests, not from disk.
  std::optional<origin::FetcherOptions> origin{};
};

struct CacheStats {
  std::uint64_t requests = 0;         // segments asked for (demand and read-ahead)
  std::uint64_t hits = 0;             // ... that were resident when asked (one-sided hits are invisible)
  std::uint64_t misses = 0;           // demanded segments that had to come from disk
  std::uint64_t readahead_fills = 0;  // read-ahead segments that had to come from disk
  std::uint64_t evictions = 0;
  std::uint64_t over_share_evictions = 0;  // ... within grace: their requester held more than its fair share
  std::uint64_t disk_bytes = 0;
  std::uint64_t disk_errors = 0;
  // --origin: fills from the HTTP origin instead of the disk.
  std::uint64_t origin_bytes = 0;     // bytes filled from the origin
  std::uint64_t origin_requests = 0;  // Range requests made (retries included)
  std::uint64_t origin_errors = 0;    // fills the origin did not deliver (after their retries)
  std::uint64_t origin_changes = 0;   // fills that found another version of their movie at the origin
  std::uint64_t fill_count = 0;
  double fill_seconds_sum = 0;              // fault-in latency: request to resident, of demanded misses
  std::vector<std::uint64_t> fill_buckets;  // counts per kFillBuckets upper bound (cumulative in the exposition)
};
inline constexpr double kFillBuckets[] = {0.001, 0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};

class SegmentCache {
 public:
  using Answer = std::function<void(proto::SegmentStatus status, const proto::SegmentEntry& entry)>;

  SegmentCache(loop::Reactor& reactor, const CacheOptions& options);
  ~SegmentCache();

  const HostBuffer& arena() const noexcept { return arena_; }
  std::uint64_t arena_length() const noexcept { return std::uint64_t{slots_.size()} * options_.segment_size; }
  TableLayout layout() const noexcept;
  const CacheOptions& options() const noexcept { return options_; }

  // Makes segment `segment` of `file` resident and calls `answer` (now, or once read); makes the
  // next `ahead` segments resident too, without an answer. `who` asks (its grace protects only its
  // fair share of the slots: slot_table.hpp).
  void request(const std::shared_ptr<CachedFile>& file, std::uint32_t segment, std::uint16_t ahead, Answer answer, Requester who = 0);
  // The bytes of `segment` of `file` in its slot when it is resident now (a use by `who`, as a
  // request is: it counts for eviction and grace), else empty. For the server's own senders
  // (Write-Record over UDP), which check it again before every send in the same turn of the loop.
  std::span<const std::uint8_t> resident_bytes(const CachedFile& file, std::uint32_t segment, Clock::time_point now, Requester who = 0);
  // A test hook: evicts now, grace or not, the slot of the segment most recently asked for (not
  // read ahead: the one a client reads next, so the eviction lands under its Reads), else the most
  // recently filled slot.
  void evict_one_for_test();
  // Called with a slot just before a segment is read into it (its quarantine over): with tokens,
  // every window over the slot is freed there (windows/slot_windows.hpp).
  void on_refill(std::function<void(std::uint32_t slot)> hook) { refill_hook_ = std::move(hook); }
  // Called when a fill found another version of `file` at its origin (after its resident segments
  // were evicted and the file marked changed): the server lists its origin again.
  void on_changed(std::function<void(const CachedFile& file)> hook) { changed_hook_ = std::move(hook); }
  // Called the first time a segment of an origin's `file` is asked for (an MPEG-TS index is built
  // then: origin/origin_library.hpp).
  void on_first_use(std::function<void(const std::shared_ptr<CachedFile>& file)> hook) { first_use_hook_ = std::move(hook); }

  const CacheStats& stats() const noexcept { return stats_; }
  std::uint32_t slots() const noexcept { return slots_.size(); }
  std::uint32_t slots_in_use() const noexcept;
  const FdCache& files() const noexcept { return fds_; }

 private:
  struct KeyHash {
    std::size_t operator()(const SegmentKey& k) const noexcept {
      return std::hash<std::uint64_t>()(k.movie * 0x9e3779b97f4a7c15ull ^ k.segment);
    }
  };
  struct Fault {
    std::shared_ptr<CachedFile> file;
    std::uint32_t segment = 0;
    std::vector<Answer> waiters;
    Requester requester = 0;  // the first to ask: the filled slot counts as requested by it
    Clock::time_point asked{};
    bool demanded = false;
    bool direct = false;               // its read went to the O_DIRECT fd
    FdCache::Handle fd;                // while its read is under way
    std::optional<std::uint32_t> lap;  // a window's: the lap its read began on
  };

  void demand(const std::shared_ptr<CachedFile>& file, std::uint32_t segment, Answer answer, Clock::time_point now, Requester who);
  void start(const SegmentKey& key, std::uint32_t slot, Clock::time_point now);
  void start_fetch(const SegmentKey& key, std::uint32_t slot, Fault f);
  bool window_current(const CachedFile& file, std::uint32_t segment, Clock::time_point now);
  void filled(const SegmentKey& key, std::int64_t result);
  void fetched(const SegmentKey& key, const origin::FetchResult& result);
  // A fill that failed: its slot goes back, its waiters hear `status`.
  void fill_failed(const SegmentKey& key, proto::SegmentStatus status);
  void fill_failed(std::uint32_t slot, Fault& f, proto::SegmentStatus status);
  // Evicts every resident segment of `file`, now.
  void evict_file(const CachedFile& file);
  void evicted(const SlotTable::Eviction& e);
  // Starts the faults waiting for a slot that can have one, evicts ahead, and sets the timer for
  // the table's next change.
  void make_progress();

  loop::Reactor& reactor_;
  CacheOptions options_;
  HostBuffer arena_;
  SlotTable slots_;
  DiskReader disk_;
  FdCache fds_;
  loop::Reactor::Registration disk_events_;
  loop::Reactor::Timer timer_;
  std::vector<std::shared_ptr<CachedFile>> slot_files_;  // the file of each resident or filling slot
  std::unordered_map<SegmentKey, std::uint32_t, KeyHash> resident_;
  std::unordered_map<SegmentKey, std::pair<std::uint32_t, Fault>, KeyHash> filling_;  // slot, fault
  std::unordered_map<SegmentKey, Fault, KeyHash> waiting_;                            // no free slot yet
  std::deque<SegmentKey> waiting_order_;
  // Waiters of faults that failed before their read started (a file that could not be opened, a
  // movie that changed at the origin), answered after make_progress.
  std::vector<std::pair<Answer, proto::SegmentStatus>> unreadable_;
  std::function<void(std::uint32_t)> refill_hook_;
  std::function<void(const CachedFile&)> changed_hook_;
  std::function<void(const std::shared_ptr<CachedFile>&)> first_use_hook_;
  std::uint32_t last_filled_ = 0;
  std::optional<SegmentKey> last_asked_;  // for the test hook
  CacheStats stats_;
  // Last: destroyed first, so no fill writes into the arena after it goes.
  std::unique_ptr<origin::OriginFetcher> origin_;
};

}  // namespace vod::server::cache
