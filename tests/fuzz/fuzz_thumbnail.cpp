// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy decodes pictures from bytes a vod-server sends: whatever they are, make_thumbnail
// either returns a JPEG or throws ThumbnailError; it never crashes, leaks or reads out of bounds.
// The first input byte chooses the position (even: none; odd: a time, and a byte offset for TS).
#include <cstdlib>
#include <span>

#include "vod/media/thumbnail.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::media;
  if (size < 1) return 0;
  const std::span<const std::uint8_t> movie(data + 1, size - 1);
  std::optional<FramePosition> at;
  if (data[0] & 1) at = FramePosition{std::uint64_t{data[0]} * 20'000, std::uint64_t{data[0]} * 188 % (movie.size() + 1)};
  ThumbnailOptions options;
  options.width = 64;
  options.max_packets = 50;  // bounded work per input
  try {
    const Thumbnail t = make_thumbnail(movie, at, options);
    if (t.jpeg.size() < 4 || t.jpeg[0] != 0xff || t.jpeg[1] != 0xd8 || t.width == 0 || t.height == 0) std::abort();
  } catch (const ThumbnailError&) {
  }
  return 0;
}
