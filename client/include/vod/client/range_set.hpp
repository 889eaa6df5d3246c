// SPDX-License-Identifier: LGPL-2.1-or-later
// A set of disjoint half-open byte ranges [begin, end): what arrived of a record, and which bytes
// of a Write-Record buffer hold valid data (the validity map).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace vod::client {

struct ByteRange {
  std::uint64_t begin = 0, end = 0;
  std::uint64_t size() const noexcept { return end - begin; }
  bool operator==(const ByteRange&) const = default;
};

class RangeSet {
 public:
  // Adds [begin, end), merging with what touches it. Returns the bytes that were new.
  std::uint64_t add(std::uint64_t begin, std::uint64_t end);
  void remove(std::uint64_t begin, std::uint64_t end);
  bool contains(std::uint64_t begin, std::uint64_t end) const;
  // What of [begin, end) is not in the set, in order.
  std::vector<ByteRange> missing(std::uint64_t begin, std::uint64_t end) const;
  // What of [begin, end) is in the set, in order.
  std::vector<ByteRange> within(std::uint64_t begin, std::uint64_t end) const;
  std::uint64_t bytes() const noexcept { return bytes_; }
  std::vector<ByteRange> ranges() const;
  void clear() noexcept {
    map_.clear();
    bytes_ = 0;
  }

 private:
  std::map<std::uint64_t, std::uint64_t> map_;  // begin -> end, disjoint, not touching
  std::uint64_t bytes_ = 0;
};

}  // namespace vod::client
