// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/range_set.hpp"

#include <algorithm>

namespace vod::client {

std::uint64_t RangeSet::add(std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return 0;
  const std::uint64_t before = bytes_;
  // The first range that could touch [begin, end): the one before begin, if it reaches begin.
  auto it = map_.upper_bound(begin);
  if (it != map_.begin() && std::prev(it)->second >= begin) --it;
  while (it != map_.end() && it->first <= end) {
    begin = std::min(begin, it->first);
    end = std::max(end, it->second);
    bytes_ -= it->second - it->first;
    it = map_.erase(it);
  }
  map_.emplace(begin, end);
  bytes_ += end - begin;
  return bytes_ - before;
}

void RangeSet::remove(std::uint64_t begin, std::uint64_t end) {
  if (begin >= end) return;
  auto it = map_.upper_bound(begin);
  if (it != map_.begin() && std::prev(it)->second > begin) --it;
  while (it != map_.end() && it->first < end) {
    const std::uint64_t b = it->first, e = it->second;
    bytes_ -= e - b;
    it = map_.erase(it);
    if (b < begin) {
      map_.emplace(b, begin);
      bytes_ += begin - b;
    }
    if (e > end) {
      it = map_.emplace(end, e).first;
      bytes_ += e - end;
      ++it;
    }
  }
}

bool RangeSet::contains(std::uint64_t begin, std::uint64_t end) const {
  if (begin >= end) return true;
  auto it = map_.upper_bound(begin);
  if (it == map_.begin()) return false;
  --it;
  return it->first <= begin && it->second >= end;
}

std::vector<ByteRange> RangeSet::within(std::uint64_t begin, std::uint64_t end) const {
  std::vector<ByteRange> out;
  auto it = map_.upper_bound(begin);
  if (it != map_.begin() && std::prev(it)->second > begin) --it;
  for (; it != map_.end() && it->first < end; ++it) out.push_back({std::max(begin, it->first), std::min(end, it->second)});
  return out;
}

std::vector<ByteRange> RangeSet::missing(std::uint64_t begin, std::uint64_t end) const {
  std::vector<ByteRange> out;
  std::uint64_t at = begin;
  for (const ByteRange& r : within(begin, end)) {
    if (r.begin > at) out.push_back({at, r.begin});
    at = r.end;
  }
  if (at < end) out.push_back({at, end});
  return out;
}

std::vector<ByteRange> RangeSet::ranges() const {
  std::vector<ByteRange> out;
  for (const auto& [b, e] : map_) out.push_back({b, e});
  return out;
}

}  // namespace vod::client
