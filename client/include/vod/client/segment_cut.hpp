// SPDX-License-Identifier: LGPL-2.1-or-later
// A movie cut into segments at its keyframes, from its keyframe index alone, and a title's other
// renditions cut where its first one is: what vod-proxy's HLS lists (proxy/src/hls_playlist.hpp)
// and where a title played over RDMA may switch renditions (title_reader.hpp). Pure functions,
// table-tested (tests/unit/hls_playlist_test.cpp, HlsCut).
#pragma once

#include <cstdint>
#include <vector>

#include "vod/protocol/keyframe_index_layout.hpp"

namespace vod::client {

// A byte range of the movie: `length` bytes from `offset`.
struct ByteSpan {
  std::uint64_t offset = 0, length = 0;
  bool operator==(const ByteSpan&) const = default;
};

struct Segment {
  ByteSpan bytes;
  std::uint64_t start_us = 0;  // presentation time of its first keyframe, from the movie's start
  std::uint64_t duration_us = 0;
  // A rendition of a title: the title's duration of this segment, which every rendition lists
  // (its own keyframes may be up to a frame away); 0: duration_us.
  std::uint64_t listed_us = 0;
  std::uint64_t extinf_us() const noexcept { return listed_us ? listed_us : duration_us; }
  bool operator==(const Segment&) const = default;
};

// Cuts a movie into segments at keyframes. Each segment starts at a keyframe and runs to the last
// keyframe not later than `target_us` after its start (a GOP longer than the target makes one
// longer segment: a segment never starts between keyframes). The last runs to the end of the movie,
// its duration up to `duration_us`. The bytes before the first keyframe are in no segment (they are
// the container's header: ts_init_range). Keyframes that do not move forward in both time and
// offset are skipped, so a hostile index yields fewer segments, never overlapping ones. Empty when
// the index has no usable keyframe.
std::vector<Segment> cut_segments(const proto::KeyframeIndex& index, std::uint64_t movie_size, std::uint64_t duration_us,
                                  std::uint64_t target_us);

// A rendition of a title cut where `reference` (the title's segments, cut from its first
// rendition) is: at each reference start, this rendition's keyframe nearest it, which must be within
// `tolerance_us` (the server grouped the title because they are; a catalog of another generation
// may disagree). Each segment lists the reference's duration (listed_us) and keeps its own times
// and bytes for the remux. Empty when a start has no keyframe near it.
std::vector<Segment> cut_like(const std::vector<Segment>& reference, const proto::KeyframeIndex& index, std::uint64_t movie_size,
                              std::uint64_t duration_us, std::uint64_t tolerance_us);

}  // namespace vod::client
