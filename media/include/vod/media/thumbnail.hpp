// SPDX-License-Identifier: LGPL-2.1-or-later
// Thumbnails for the proxy's web pages: the video frame at a keyframe, decoded with libavcodec,
// scaled with libswscale and encoded as a baseline JPEG with libavcodec's MJPEG encoder. The
// movie's bytes come from a ByteSource, so the same code decodes a file in memory (tests) and a
// movie read over RDMA or UDP (vod-proxy); only what the demuxer needs is read (the header and the
// packets from the keyframe on), never the whole movie.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace vod::media {

struct ThumbnailOptions {
  unsigned width = 320;                        // the JPEG's width; the height keeps the frame's display aspect
  unsigned max_height = 320;                   // a tall frame is scaled to this height instead
  int quality = 5;                             // MJPEG qscale, 2 (best) .. 31
  unsigned max_packets = 600;                  // packets demuxed after the seek before giving up
  std::chrono::milliseconds time_limit{5000};  // and the time for the whole picture, reads included
};

struct Thumbnail {
  std::vector<std::uint8_t> jpeg;
  unsigned width = 0, height = 0;
  std::int64_t pts_us = 0;  // the decoded frame's presentation time, as ffprobe prints it
};

// Where the frame is: a keyframe's presentation time (from the movie's keyframe index) and, for
// containers that allow it (MPEG-TS), its byte offset, which seeks without searching.
struct FramePosition {
  std::uint64_t time_us = 0;
  std::optional<std::uint64_t> byte_offset;
};

// Reads bytes of the movie: fills as much of `dest` as it can at `offset`, returns the count (0 at
// the end). May throw; the error text ends up in the ThumbnailError.
using ReadAt = std::function<std::size_t(std::uint64_t offset, std::span<std::uint8_t> dest)>;

class ThumbnailError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Decodes the first frame at `position` (or the first frame of the input without one) and encodes
// it. Throws ThumbnailError saying why when there is no video stream, the seek fails, or no frame
// decodes cleanly within max_packets.
Thumbnail make_thumbnail(std::uint64_t size, const ReadAt& read_at, std::optional<FramePosition> position,
                         const ThumbnailOptions& options = {});
Thumbnail make_thumbnail(std::span<const std::uint8_t> bytes, std::optional<FramePosition> position, const ThumbnailOptions& options = {});

// A plain dark frame of width × height as a JPEG: what a page shows for a movie whose picture
// cannot be decoded, so that it never shows a broken image.
std::vector<std::uint8_t> placeholder_jpeg(unsigned width, unsigned height);

}  // namespace vod::media
