// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/lazy_indexer.hpp"
#include "cache/content_digest.hpp"
#include "cache/file_map.hpp"

#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

#include "movie_library.hpp"
#include "origin/origin_library.hpp"
#include "vod/log.hpp"
#include "vod/media/probe.hpp"

namespace vod::server::cache {

namespace {
struct Stopped {};

proto::KeyframeIndex thinned(const proto::KeyframeIndex& index, std::uint32_t capacity) {
  if (index.entries.size() <= capacity) return index;
  proto::KeyframeIndex out = index;
  out.entries.clear();
  for (std::uint32_t i = 0; i < capacity; ++i) out.entries.push_back(index.entries[std::uint64_t{i} * index.entries.size() / capacity]);
  return out;
}
}  // namespace

std::uint32_t index_capacity(std::uint64_t duration_us) noexcept {
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(duration_us / 1'000'000 + 256, 1u << 20));
}

HostBuffer index_region(const std::optional<proto::KeyframeIndex>& index, std::uint64_t movie_size, std::uint32_t capacity) {
  HostBuffer region(sizeof(proto::WireIndexHeader) + std::size_t{capacity} * sizeof(proto::WireIndexEntry));
  proto::KeyframeIndex pending;
  pending.movie_size = movie_size;
  pending.flags = proto::kIndexPending;
  const auto bytes = proto::encode_index(index ? thinned(*index, capacity) : pending, proto::kSegmentsVersion);
  std::memcpy(region.data(), bytes.data(), bytes.size());
  return region;
}

void publish_index(const HostBuffer& region, const proto::KeyframeIndex& index) {
  const auto capacity = static_cast<std::uint32_t>((region.length() - sizeof(proto::WireIndexHeader)) / sizeof(proto::WireIndexEntry));
  const auto bytes = proto::encode_index(thinned(index, capacity), proto::kSegmentsVersion);
  std::uint8_t* at = region.data();
  constexpr std::size_t header = sizeof(proto::WireIndexHeader);
  std::memcpy(at + header, bytes.data() + header, bytes.size() - header);  // the entries
  std::uint32_t crc;
  std::memcpy(&crc, bytes.data() + offsetof(proto::WireIndexHeader, entries_crc32c), 4);
  std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(at + offsetof(proto::WireIndexHeader, entries_crc32c)))
      .store(crc, std::memory_order_release);
  std::uint64_t word;
  std::memcpy(&word, bytes.data() + proto::kIndexPublishWord, 8);
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(at + proto::kIndexPublishWord)).store(word, std::memory_order_release);
}

LazyIndexer::LazyIndexer(loop::Reactor& reactor, const IndexStore& store, std::function<void()> on_found, Probed on_probed)
    : reactor_(reactor), store_(store), on_found_(std::move(on_found)), on_probed_(std::move(on_probed)) {
  event_ = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!event_) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  events_ = reactor_.add(event_.get(), [this] { publish_results(); });
}

LazyIndexer::~LazyIndexer() {
  {
    std::lock_guard lock(mutex_);  // so the thread cannot miss the wake-up between its check and its wait
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void LazyIndexer::add(std::shared_ptr<const LoadedMovie> movie) {
  // Three kinds of work, each its own job, the quick ones first: probes (headers), then indexes (an
  // MPEG-TS index reads the file, others only their container's index), then content identities
  // (every byte of every file).
  const bool at_origin = movie->cached && movie->cached->origin();
  const bool probe = movie->probe_pending, index = !probe && movie->index_pending && !at_origin;
  const bool digest = !probe && !movie->content.known();  // read here, on the event loop, never on the thread
  {
    std::lock_guard lock(mutex_);
    if (probe) to_probe_.push_back({movie, true, false, false});
    if (index) to_index_.push_back({movie, false, true, false});
    if (digest) to_digest_.push_back({movie, false, false, true});
  }
  wake_.notify_one();
}

void LazyIndexer::index_on_first_use(std::shared_ptr<const LoadedMovie> movie) {
  if (!movie->index_pending || !cache_reader_) return;
  {
    std::lock_guard lock(mutex_);
    to_index_.push_back({std::move(movie), false, true, false});
  }
  wake_.notify_one();
}

std::size_t LazyIndexer::queued() const {
  std::lock_guard lock(mutex_);
  return to_probe_.size() + to_index_.size() + to_digest_.size();
}

void LazyIndexer::start() {
  if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
}

void LazyIndexer::run() {
  for (;;) {
    Result r;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !to_probe_.empty() || !to_index_.empty() || !to_digest_.empty(); });
      if (stop_) return;
      auto& queue = !to_probe_.empty() ? to_probe_ : !to_index_.empty() ? to_index_ : to_digest_;
      r.job = std::move(queue.front());
      queue.pop_front();
    }
    const auto started = std::chrono::steady_clock::now();
    try {
      work(r);
    } catch (const Stopped&) {
      return;
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    {
      std::lock_guard lock(mutex_);
      done_.push_back(std::move(r));
    }
    const std::uint64_t one = 1;
    (void)!write(event_.get(), &one, sizeof one);
  }
}

// The file must still be the one listed (path, size, mtime, inode) after it was read, or what was
// derived from it belongs to nobody: a file replaced meanwhile is the next rescan's.
void LazyIndexer::work(Result& r) {
  const LoadedMovie& m = *r.job.movie;
  const FileIdentity id = m.identity();
  if (m.cached && m.cached->origin()) return work_at_origin(r);
  const auto unchanged = [&id] {
    struct stat st {};
    return stat(id.path.c_str(), &st) == 0 && id.same_version(st);
  };
  try {
    if (r.job.probe) {
      r.described = describe_copy(m, &store_);
      if (!unchanged()) {
        r.described.reset();
        throw std::runtime_error("the file changed since it was listed (the next rescan lists it again)");
      }
      return;
    }
    const FileMap map(m.path, m.file_size, MADV_SEQUENTIAL);
    if (r.job.index)
      r.index = media::index_keyframes(map.bytes(), m.info, [this](std::uint64_t, std::uint64_t) {
        if (stop_) throw Stopped{};
      });
    if (r.job.digest)
      r.content = content_id(map.bytes(), [this] {
        if (stop_) throw Stopped{};
      });
    if (!unchanged()) {
      r.content = {};  // never an identity of bytes that changed while they were read
      throw std::runtime_error("the file changed while it was read");
    }
    if (r.index) store_.save(id, *r.index);
    if (r.content.known()) store_.save_digest(id, r.content);
  } catch (const Stopped&) {
    throw;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
}

// A movie of an HTTP origin: its version is checked by its ETag on every read (RangeSource), and
// its identity came with its listing, so only probes and indexes are left to do.
void LazyIndexer::work_at_origin(Result& r) {
  const LoadedMovie& m = *r.job.movie;
  try {
    if (r.job.probe) {
      r.described = describe_copy(m, &store_);
      return;
    }
    if (r.job.index) {
      r.index = origin::index_origin_movie(m, *cache_reader_, [this] {
        if (stop_) throw Stopped{};
      });
      store_.save(m.identity(), *r.index);
    }
  } catch (const Stopped&) {
    throw;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
}

void LazyIndexer::publish_results() {
  std::uint64_t ignored;
  (void)!read(event_.get(), &ignored, sizeof ignored);
  std::deque<Result> results;
  {
    std::lock_guard lock(mutex_);
    results.swap(done_);
  }
  bool found = false;  // identities or indexes: the catalog is to be republished
  for (Result& r : results) {
    const LoadedMovie& m = *r.job.movie;
    if (r.job.probe) {
      if (!r.described) log::warn("library", "dropping " + m.path + " from the catalog: " + r.error);
      else r.described->content = m.content;  // on the event loop, as every write of it
      // Its index and identity follow, if it still lacks them, and if the library took it (a rescan
      // may have dropped the file meanwhile).
      if (on_probed_ && on_probed_(r.job.movie, r.described) && r.described) add(r.described);
      continue;
    }
    char secs[16];
    std::snprintf(secs, sizeof secs, "%.1f", r.seconds);
    if (r.job.digest) {
      if (r.content.known()) {
        m.content = r.content;
        found = true;
        log::info("cache", "content identity of " + m.name + ": " + r.content.hex() + " (" + secs + " s)");
      } else {
        log::warn("cache",
                  "no content identity for " + m.name + ": " + r.error + "; a resume elsewhere restarts or stops with movie_changed");
      }
    }
    if (!r.job.index) continue;
    if (!r.index) {
      log::warn("cache", "cannot index " + m.name + ": " + r.error + "; it is served without a keyframe index");
      proto::KeyframeIndex empty;
      empty.movie_size = m.file_size;
      publish_index(m.index_bytes, empty);
      continue;
    }
    publish_index(m.index_bytes, *r.index);
    m.index = std::move(*r.index);  // for what the event loop derives from indexes: titles
    m.index_pending = false;
    found = true;  // a republish lists the titles this index completes
    log::info("cache", "index of " + m.name + " ready: " + std::to_string(m.index.entries.size()) + " keyframes in " + secs + " s" +
                           (store_.enabled() ? ", kept in the state directory" : ""));
  }
  if (found && on_found_) on_found_();
}

}  // namespace vod::server::cache
