// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/segment_cut.hpp"

#include <algorithm>

namespace vod::client {

std::vector<Segment> cut_segments(const proto::KeyframeIndex& index, std::uint64_t movie_size, std::uint64_t duration_us,
                                  std::uint64_t target_us) {
  std::vector<proto::Keyframe> k;
  for (const auto& e : index.entries) {
    if (e.offset >= movie_size) break;
    if (!k.empty() && (e.offset <= k.back().offset || e.time_us <= k.back().time_us)) continue;
    k.push_back(e);
  }
  std::vector<Segment> out;
  if (k.empty()) return out;
  target_us = std::max<std::uint64_t>(target_us, 1);
  // A keyframe a little past the target still ends the segment (NTSC's 1.001 s GOPs make 4.004 s
  // segments of a 4 s target, not 3.003 s), as long as the duration still rounds to the target.
  const std::uint64_t reach = target_us + std::min<std::uint64_t>(target_us / 8, 499'000);
  std::size_t i = 0;
  while (i < k.size()) {
    const proto::Keyframe& start = k[i];
    std::size_t j = i + 1;
    while (j < k.size() && k[j].time_us - start.time_us <= reach) ++j;
    const std::size_t next = std::max(j - 1, i + 1);
    const bool to_the_end = next >= k.size() || (duration_us > start.time_us && duration_us - start.time_us <= reach);
    Segment s;
    s.start_us = start.time_us;
    if (!to_the_end) {
      s.bytes = {start.offset, k[next].offset - start.offset};
      s.duration_us = k[next].time_us - start.time_us;
      out.push_back(s);
      i = next;
      continue;
    }
    s.bytes = {start.offset, movie_size - start.offset};
    if (duration_us > start.time_us) {
      s.duration_us = duration_us - start.time_us;
    } else if (!out.empty()) {
      // No duration past this keyframe: the bytes at the movie's average rate so far.
      const double us_per_byte =
          static_cast<double>(start.time_us - out.front().start_us) / static_cast<double>(start.offset - out.front().bytes.offset);
      const double estimate = std::min(us_per_byte * static_cast<double>(s.bytes.length), 1e15);  // a hostile index: at most 30 years
      s.duration_us = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(estimate));
    } else {
      s.duration_us = target_us;
    }
    out.push_back(s);
    break;
  }
  return out;
}

std::vector<Segment> cut_like(const std::vector<Segment>& reference, const proto::KeyframeIndex& index, std::uint64_t movie_size,
                              std::uint64_t duration_us, std::uint64_t tolerance_us) {
  const auto& k = index.entries;
  std::vector<Segment> out;
  std::size_t at = 0;  // keyframes before `at` are behind the previous start
  for (const Segment& r : reference) {
    while (at + 1 < k.size() && k[at + 1].time_us <= r.start_us) ++at;
    std::size_t best = at;
    if (at + 1 < k.size() &&
        k[at + 1].time_us - r.start_us < (r.start_us > k[at].time_us ? r.start_us - k[at].time_us : k[at].time_us - r.start_us))
      best = at + 1;
    if (best >= k.size()) return {};
    const std::uint64_t gap = k[best].time_us > r.start_us ? k[best].time_us - r.start_us : r.start_us - k[best].time_us;
    if (gap > tolerance_us || (!out.empty() && (k[best].time_us <= out.back().start_us || k[best].offset <= out.back().bytes.offset)))
      return {};
    if (!out.empty()) {
      out.back().duration_us = k[best].time_us - out.back().start_us;
      out.back().bytes.length = k[best].offset - out.back().bytes.offset;
    }
    out.push_back({{k[best].offset, 0}, k[best].time_us, 0, r.duration_us});
    at = best;
  }
  if (!out.empty()) {
    if (movie_size <= out.back().bytes.offset) return {};
    out.back().bytes.length = movie_size - out.back().bytes.offset;
    out.back().duration_us = duration_us > out.back().start_us ? duration_us - out.back().start_us : out.back().listed_us;
  }
  return out;
}

}  // namespace vod::client
