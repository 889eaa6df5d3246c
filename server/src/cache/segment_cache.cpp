// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/segment_cache.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "vod/log.hpp"

namespace vod::server::cache {

namespace {
std::uint32_t slot_count(const CacheOptions& o) {
  const std::uint64_t n = o.cache_size / o.segment_size;
  if (n == 0) throw std::invalid_argument("--cache-size is smaller than one segment (--segment-size)");
  if (n > proto::kMaxSlot + 1ull) throw std::invalid_argument("--cache-size holds more than 2^24 segments: use larger segments");
  return static_cast<std::uint32_t>(n);
}

// Slots kept free or quarantined by evicting ahead: an eighth of the cache, at least one, at most 64.
std::uint32_t reserve_for(std::uint32_t slots) { return std::clamp<std::uint32_t>(slots / 8, 1, 64); }

// A margin beyond the clients' Read deadline before a slot whose entry went absent is refilled.
constexpr auto kQuarantineMargin = std::chrono::milliseconds(500);
}  // namespace

SegmentCache::SegmentCache(loop::Reactor& reactor, const CacheOptions& options)
    : reactor_(reactor),
      options_(options),
      arena_(std::uint64_t{slot_count(options)} * options.segment_size),
      slots_(slot_count(options), options.grace,
             options.remote_readers ? options.read_deadline + kQuarantineMargin : Clock::duration::zero(), reserve_for(slot_count(options)),
             options.remote_readers
                 ? std::optional<Clock::duration>(std::chrono::milliseconds(proto::window_use_ms(
                       static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(options.grace).count()),
                       static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(options.read_deadline).count()))))
                 : std::nullopt),
      disk_(options.disk_depth),
      fds_(fd_cache_capacity()),
      slot_files_(slot_count(options)) {
  stats_.fill_buckets.assign(std::size(kFillBuckets), 0);
  if (options_.origin) origin_ = std::make_unique<origin::OriginFetcher>(reactor_, *options_.origin);
  disk_events_ = reactor_.add(disk_.event_fd(), [this] { disk_.reap(); });
  log::info("cache", "segment cache: " + std::to_string(slots_.size()) + " slots of " + std::to_string(options_.segment_size >> 10) +
                         " KiB (" + std::to_string(arena_length() >> 20) + " MiB" + (arena_.huge_pages() ? ", huge pages" : "") +
                         "), grace " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(options_.grace).count()) +
                         " ms, client Read deadline " +
                         std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(options_.read_deadline).count()) + " ms" +
                         (options_.remote_readers ? "" : "; no RDMA readers: evicted slots are refilled at once"));
}

SegmentCache::~SegmentCache() = default;

TableLayout SegmentCache::layout() const noexcept {
  TableLayout l;
  l.segment_size = options_.segment_size;
  l.arena_length = arena_length();
  l.read_deadline_ms = static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(options_.read_deadline).count());
  l.request_credits = options_.request_credits;
  l.grace_ms = static_cast<std::uint32_t>(std::chrono::duration_cast<std::chrono::milliseconds>(options_.grace).count());
  return l;
}

std::uint32_t SegmentCache::slots_in_use() const noexcept {
  return slots_.count(SlotTable::State::resident) + slots_.count(SlotTable::State::filling);
}

void SegmentCache::request(const std::shared_ptr<CachedFile>& file, std::uint32_t segment, std::uint16_t ahead, Answer answer,
                           Requester who) {
  if (segment >= file->segments()) return answer(proto::SegmentStatus::out_of_range, {});
  if (first_use_hook_ && file->origin() && file->take_first_use()) first_use_hook_(file);
  const auto now = Clock::now();
  const std::size_t waiting = waiting_.size();
  last_asked_ = SegmentKey{file->id(), segment};
  demand(file, segment, std::move(answer), now, who);
  for (std::uint32_t i = 1; i <= ahead && segment + i < file->segments(); ++i) demand(file, segment + i, nullptr, now, who);
  if (waiting_.size() != waiting) make_progress();  // a hit changes no slot: nothing to start or evict
}

void SegmentCache::demand(const std::shared_ptr<CachedFile>& file, std::uint32_t segment, Answer answer, Clock::time_point now,
                          Requester who) {
  const SegmentKey key{file->id(), segment};
  ++stats_.requests;
  if (file->changed()) {  // another version at the origin: nothing of this one is served again
    if (answer) answer(proto::SegmentStatus::changed, {});
    return;
  }
  if (file->window() && !window_current(*file, segment, now)) {
    if (answer) answer(proto::SegmentStatus::out_of_range, {});  // being written, or never was: not in the window
    return;
  }
  if (auto it = resident_.find(key); it != resident_.end()) {
    ++stats_.hits;
    slots_.touch(it->second, now, who);
    if (answer) answer(proto::SegmentStatus::ok, file->entry(segment));
    return;
  }
  auto attach = [&](Fault& f) {
    if (answer) {
      f.waiters.push_back(std::move(answer));
      if (!f.demanded) f.asked = now;  // a read-ahead turned demand: its latency counts from here
      f.demanded = true;
    }
  };
  if (auto it = filling_.find(key); it != filling_.end()) return attach(it->second.second);
  if (auto it = waiting_.find(key); it != waiting_.end()) return attach(it->second);
  Fault f;
  f.file = file;
  f.segment = segment;
  f.requester = who;
  f.asked = now;
  attach(f);
  waiting_.emplace(key, std::move(f));
  waiting_order_.push_back(key);
}

void SegmentCache::make_progress() {
  const auto now = Clock::now();
  // Demanded faults first, then read-ahead, each oldest first.
  for (int pass = 0; pass < 2; ++pass)
    for (auto it = waiting_order_.begin(); it != waiting_order_.end();) {
      auto w = waiting_.find(*it);
      if (w == waiting_.end()) {
        it = waiting_order_.erase(it);
        continue;
      }
      if (w->second.demanded != (pass == 0)) {
        ++it;
        continue;
      }
      const auto slot = slots_.take(*it, now);
      if (!slot) break;
      start(*it, *slot, now);
      it = waiting_order_.erase(it);
    }
  std::vector<Requester> waiting_for;
  waiting_for.reserve(waiting_.size());
  std::uint32_t demanded = 0;
  for (const auto& [key, f] : waiting_) {
    waiting_for.push_back(f.requester);
    demanded += f.demanded;
  }
  for (const auto& e : slots_.plan_evictions(now, static_cast<std::uint32_t>(waiting_.size()), waiting_for, demanded)) evicted(e);
  stats_.over_share_evictions = slots_.over_share_evictions();
  timer_.cancel();
  if (!waiting_.empty() || slots_.count(SlotTable::State::quarantined) > 0 || slots_.short_of_reserve())
    if (auto next = slots_.next_change(now)) timer_ = reactor_.at(*next, [this] { make_progress(); });
  for (auto failed = std::exchange(unreadable_, {}); auto& [w, status] : failed) w(status, {});
}

void SegmentCache::start(const SegmentKey& key, std::uint32_t slot, Clock::time_point) {
  auto node = waiting_.extract(key);
  Fault& f = node.mapped();
  CachedFile& file = *f.file;
  if (file.origin()) return start_fetch(key, slot, std::move(f));
  if (file.window()) {  // a DVR window's chunk: read through the window's own descriptor, while its lap is whole
    f.lap = file.window()->complete_lap(key.segment);
    if (!f.lap) {  // claimed for the next lap while it waited for a slot
      slots_.fill_failed(slot);
      for (auto& w : f.waiters) unreadable_.emplace_back(std::move(w), proto::SegmentStatus::out_of_range);
      return;
    }
  } else {
    try {
      f.fd = fds_.open(file);  // before anything changes: a file that cannot be read fails its fault here
    } catch (const std::exception& e) {
      ++stats_.disk_errors;
      log::error("cache", "segment " + std::to_string(key.segment) + ": " + e.what());
      slots_.fill_failed(slot);
      // Answered once make_progress is done with its queue: an answer may ask for more.
      for (auto& w : f.waiters) unreadable_.emplace_back(std::move(w), proto::SegmentStatus::disk_error);
      return;
    }
  }
  if (refill_hook_) refill_hook_(slot);  // no window over the slot outlives what it held
  slot_files_[slot] = f.file;
  std::uint8_t* dest = arena_.data() + std::uint64_t{slot} * options_.segment_size;
  const std::uint64_t offset = std::uint64_t{key.segment} * options_.segment_size;
  const std::size_t length = file.read_length(key.segment);
  f.direct = file.direct();
  const int fd = file.window() ? file.window()->read_fd() : f.fd.fd();
  filling_.emplace(key, std::make_pair(slot, std::move(f)));
  disk_.read(fd, dest, length, offset, [this, key](std::int64_t result) { filled(key, result); });
}

// A window's segment: resident only with the lap its chunk holds whole now (a slot of an older lap
// is evicted here); false when the chunk holds no whole segment (being written, or never written).
bool SegmentCache::window_current(const CachedFile& file, std::uint32_t segment, Clock::time_point now) {
  const auto lap = file.window()->complete_lap(segment);
  auto it = resident_.find(SegmentKey{file.id(), segment});
  if (it != resident_.end() && (!lap || file.entry(segment).generation != *lap))
    if (auto e = slots_.evict(it->second, now)) evicted(*e);
  return lap.has_value();
}

void SegmentCache::start_fetch(const SegmentKey& key, std::uint32_t slot, Fault f) {
  const CachedFile& file = *f.file;
  if (file.changed()) {  // while it waited for a slot
    slots_.fill_failed(slot);
    for (auto& w : f.waiters) unreadable_.emplace_back(std::move(w), proto::SegmentStatus::changed);
    return;
  }
  if (refill_hook_) refill_hook_(slot);
  slot_files_[slot] = f.file;
  std::uint8_t* dest = arena_.data() + std::uint64_t{slot} * options_.segment_size;
  const std::uint64_t offset = std::uint64_t{key.segment} * options_.segment_size;
  const std::uint32_t length = file.segment_length(key.segment);
  const OriginObject& object = *file.origin();
  const std::uint64_t size = file.size();
  filling_.emplace(key, std::make_pair(slot, std::move(f)));
  // Exactly the segment's bytes, once: the waiters of this fault (filling_) share it however many ask.
  origin_->fetch(object.url, offset, length, size, object.etag, dest, [this, key](const origin::FetchResult& r) { fetched(key, r); });
}

void SegmentCache::fetched(const SegmentKey& key, const origin::FetchResult& r) {
  auto it = filling_.find(key);
  if (it == filling_.end()) return;
  const std::shared_ptr<CachedFile> file = it->second.second.file;
  stats_.origin_requests += r.attempts;
  if (r.outcome == origin::FetchResult::Outcome::ok) return filled(key, file->segment_length(key.segment));
  if (r.outcome == origin::FetchResult::Outcome::failed) {
    ++stats_.origin_errors;
    log::error("origin", "segment " + std::to_string(key.segment) + ": " + r.error);
    fill_failed(key, proto::SegmentStatus::origin_error);
    return make_progress();
  }
  // Another version at the origin: its bytes must never meet this version's in one reader, so
  // nothing of this version stays resident, and the file is never filled again.
  ++stats_.origin_changes;
  const bool first = !file->changed();  // its other fills under way find the same
  file->mark_changed();
  fill_failed(key, proto::SegmentStatus::changed);
  if (!first) return make_progress();
  log::warn("origin", r.error + ": evicting what is resident of it; the origin is listed again");
  evict_file(*file);
  make_progress();
  if (changed_hook_) changed_hook_(*file);
}

void SegmentCache::fill_failed(const SegmentKey& key, proto::SegmentStatus status) {
  auto node = filling_.extract(key);
  if (!node.empty()) fill_failed(node.mapped().first, node.mapped().second, status);
}

void SegmentCache::fill_failed(std::uint32_t slot, Fault& f, proto::SegmentStatus status) {
  slots_.fill_failed(slot);
  slot_files_[slot].reset();
  for (auto& w : f.waiters) w(status, {});
}

void SegmentCache::evict_file(const CachedFile& file) {
  std::vector<std::uint32_t> slots;
  for (const auto& [key, slot] : resident_)
    if (key.movie == file.id()) slots.push_back(slot);
  const auto now = Clock::now();
  for (const std::uint32_t slot : slots)
    if (auto e = slots_.evict(slot, now)) evicted(*e);
}

void SegmentCache::filled(const SegmentKey& key, std::int64_t result) {
  auto node = filling_.extract(key);
  if (node.empty()) return;
  const std::uint32_t slot = node.mapped().first;
  Fault& f = node.mapped().second;
  CachedFile& file = *f.file;
  const std::uint32_t want = file.segment_length(key.segment);
  if (result == -EINVAL && f.direct) {  // O_DIRECT refused at read time: again, through the page cache
    if (file.direct()) log::warn("cache", file.path() + ": O_DIRECT reads refused (EINVAL); reading it through the page cache");
    file.stop_direct();
    slots_.fill_failed(slot);
    slot_files_[slot].reset();
    waiting_.emplace(key, std::move(f));
    waiting_order_.push_front(key);
    return make_progress();
  }
  const auto now = Clock::now();
  if (result < static_cast<std::int64_t>(want)) {
    ++stats_.disk_errors;
    const std::string why = result < 0 ? std::strerror(static_cast<int>(-result)) : "the file is shorter than when it was listed";
    log::error("cache", "reading segment " + std::to_string(key.segment) + " of " + file.path() + " from disk failed: " + why);
    fill_failed(slot, f, proto::SegmentStatus::disk_error);
    return make_progress();
  }
  if (file.window() && file.window()->complete_lap(key.segment) != f.lap) {  // the writer claimed it during the read
    fill_failed(slot, f, proto::SegmentStatus::out_of_range);
    return make_progress();
  }
  (file.origin() ? stats_.origin_bytes : stats_.disk_bytes) += want;
  // A short last segment: the rest of its slot holds zeros, not what an earlier occupant (another
  // movie, perhaps) left there, for a device that bounds a window by the region under it.
  if (want < options_.segment_size)
    std::memset(arena_.data() + std::uint64_t{slot} * options_.segment_size + want, 0, options_.segment_size - want);
  slots_.filled(slot, now, f.requester);
  last_filled_ = slot;
  const proto::SegmentEntry entry = file.publish(key.segment, slot, f.lap);
  resident_.emplace(key, slot);
  if (f.demanded) {
    ++stats_.misses;
    const double secs = std::chrono::duration<double>(now - f.asked).count();
    ++stats_.fill_count;
    stats_.fill_seconds_sum += secs;
    for (std::size_t i = 0; i < std::size(kFillBuckets); ++i)
      if (secs <= kFillBuckets[i]) {
        ++stats_.fill_buckets[i];
        break;
      }
  } else {
    ++stats_.readahead_fills;
  }
  for (auto& w : f.waiters) w(proto::SegmentStatus::ok, entry);
  make_progress();
}

std::span<const std::uint8_t> SegmentCache::resident_bytes(const CachedFile& file, std::uint32_t segment, Clock::time_point now,
                                                           Requester who) {
  auto it = resident_.find(SegmentKey{file.id(), segment});
  if (it == resident_.end()) return {};
  if (file.window() && file.window()->complete_lap(segment) != file.entry(segment).generation) return {};  // an older lap
  slots_.touch(it->second, now, who);
  return {arena_.data() + std::uint64_t{it->second} * options_.segment_size, file.segment_length(segment)};
}

void SegmentCache::evicted(const SlotTable::Eviction& e) {
  resident_.erase(e.key);
  if (auto file = std::move(slot_files_[e.slot])) file->publish(e.key.segment, std::nullopt);
  ++stats_.evictions;
}

void SegmentCache::evict_one_for_test() {
  const auto asked = last_asked_ ? resident_.find(*last_asked_) : resident_.end();
  const std::uint32_t slot = asked != resident_.end() ? asked->second : last_filled_;
  if (slots_.state(slot) != SlotTable::State::resident) return;
  if (auto e = slots_.evict(slot, Clock::now())) {
    log::info("cache", "test hook: evicted slot " + std::to_string(e->slot) + " (segment " + std::to_string(e->key.segment) + ")");
    evicted(*e);
    make_progress();
  }
}

}  // namespace vod::server::cache
