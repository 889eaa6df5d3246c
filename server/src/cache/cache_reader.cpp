// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/cache_reader.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace vod::server::cache {

CacheReader::CacheReader(loop::Reactor& reactor, SegmentCache& cache) : reactor_(reactor), cache_(cache) {
  event_ = UniqueFd(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!event_) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  events_ = reactor_.add(event_.get(), [this] { serve(); });
}

std::vector<std::uint8_t> CacheReader::segment(const std::shared_ptr<CachedFile>& file, std::uint32_t segment,
                                               const std::function<void()>& stop) {
  auto ask = std::make_shared<Ask>();
  ask->file = file;
  ask->segment = segment;
  {
    std::lock_guard lock(mutex_);
    asks_.push_back(ask);
  }
  const std::uint64_t one = 1;
  (void)!write(event_.get(), &one, sizeof one);
  std::unique_lock lock(mutex_);
  while (!ask->done) {
    answered_.wait_for(lock, std::chrono::milliseconds(100));
    if (!ask->done && stop) {
      lock.unlock();
      stop();  // may throw: the loop's answer then goes to nobody
      lock.lock();
    }
  }
  if (!ask->error.empty()) throw std::runtime_error(ask->error);
  return std::move(ask->bytes);
}

void CacheReader::serve() {
  std::uint64_t ignored;
  (void)!read(event_.get(), &ignored, sizeof ignored);
  std::deque<std::shared_ptr<Ask>> asks;
  {
    std::lock_guard lock(mutex_);
    asks.swap(asks_);
  }
  for (auto& ask : asks)
    cache_.request(ask->file, ask->segment, 1, [this, ask](proto::SegmentStatus status, const proto::SegmentEntry&) {
      std::vector<std::uint8_t> bytes;
      std::string error;
      if (status != proto::SegmentStatus::ok) {
        error = "segment " + std::to_string(ask->segment) + ": " + proto::to_string(status);
      } else {
        const auto resident = cache_.resident_bytes(*ask->file, ask->segment, std::chrono::steady_clock::now());
        bytes.assign(resident.begin(), resident.end());  // copied now: the slot may be refilled after this turn
      }
      {
        std::lock_guard lock(mutex_);
        ask->bytes = std::move(bytes);
        ask->error = std::move(error);
        ask->done = true;
      }
      answered_.notify_all();
    });
}

std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)> CacheReader::reader(std::shared_ptr<CachedFile> file,
                                                                                       std::function<void()> stop) {
  struct Kept {
    std::int64_t segment = -1;
    std::vector<std::uint8_t> bytes;
  };
  auto kept = std::make_shared<Kept>();
  return [this, file = std::move(file), stop = std::move(stop), kept](std::uint64_t offset, std::span<std::uint8_t> dest) -> std::size_t {
    std::size_t done = 0;
    const std::uint64_t size = file->size(), segment_size = file->segment_size();
    while (done < dest.size() && offset + done < size) {
      const std::uint64_t at = offset + done;
      const auto s = static_cast<std::uint32_t>(at / segment_size);
      if (kept->segment != s) {
        kept->bytes = segment(file, s, stop);
        kept->segment = s;
      }
      const std::size_t in = static_cast<std::size_t>(at - std::uint64_t{s} * segment_size);
      if (in >= kept->bytes.size()) break;
      const std::size_t n = std::min(dest.size() - done, kept->bytes.size() - in);
      std::memcpy(dest.data() + done, kept->bytes.data() + in, n);
      done += n;
    }
    return done;
  };
}

}  // namespace vod::server::cache
