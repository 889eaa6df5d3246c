// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/ring_pool.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <mutex>
#include <new>
#include <vector>

namespace vod::client {

namespace {
constexpr std::size_t kHugePage = 2u << 20;
// At most this many spare rings and bytes: enough for a few sessions closing and reopening at once.
constexpr std::size_t kMaxSpare = 4;
constexpr std::size_t kMaxSpareBytes = 64u << 20;

struct Pool {
  std::mutex lock;
  std::vector<std::pair<std::uint8_t*, std::size_t>> spare;  // (ring, bytes)
  std::size_t spare_bytes = 0;
};

// Never destroyed: an engine may be destroyed during the process's exit, after static
// destructors ran (a GStreamer element torn down at exit). The spare rings stay reachable from it
// and go with the process.
Pool& pool() {
  static Pool* const p = new Pool;
  return *p;
}

constexpr std::size_t kPage = 4096;
// Rings of a huge page or more are allocated in whole huge pages; smaller ones (a thousand idle
// viewers' rings) in small pages, so that none of them grows to a huge page when it is touched.
std::size_t rounded(std::size_t bytes) {
  const std::size_t unit = bytes >= kHugePage ? kHugePage : kPage;
  return (bytes + unit - 1) / unit * unit;
}
}  // namespace

void RingReturn::operator()(std::uint8_t* ring) const noexcept {
  if (!ring) return;
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> guard(p.lock);
    if (p.spare.size() < kMaxSpare && p.spare_bytes + bytes <= kMaxSpareBytes) {
      p.spare.emplace_back(ring, bytes);
      p.spare_bytes += bytes;
      return;
    }
  }
  std::free(ring);
}

RingMemory take_ring(std::size_t bytes) {
  const std::size_t size = rounded(bytes);
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> guard(p.lock);
    for (auto it = p.spare.begin(); it != p.spare.end(); ++it) {
      if (it->second != size) continue;
      std::uint8_t* ring = it->first;
      p.spare.erase(it);
      p.spare_bytes -= size;
      return RingMemory(ring, RingReturn{size});
    }
  }
  const bool huge = size >= kHugePage;
  auto* ring = static_cast<std::uint8_t*>(std::aligned_alloc(huge ? kHugePage : kPage, size));
  if (!ring) throw std::bad_alloc();
  if (huge) madvise(ring, size, MADV_HUGEPAGE);  // advice only: without transparent huge pages, small pages
  return RingMemory(ring, RingReturn{size});
}

std::size_t spare_rings() noexcept {
  Pool& p = pool();
  std::lock_guard<std::mutex> guard(p.lock);
  return p.spare.size();
}

}  // namespace vod::client
