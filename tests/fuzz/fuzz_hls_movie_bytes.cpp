// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy's HLS playlists are made from hostile input: a movie's first bytes (the TS tables its
// EXT-X-MAP covers), its codec extradata (the CODECS attribute) and a keyframe index a server sent.
// Whatever arrives, the init range stays inside the bytes read and on packet boundaries, and the
// segments tile the movie from the first keyframe without overlap. The same bytes spliced to
// themselves as a title's renditions are (client/ts_splice.hpp): only continuity counters change.
#include <cstdlib>
#include <cstring>
#include <span>

#include <vector>

#include "hls_playlist.hpp"
#include "vod/client/ts_splice.hpp"
#include "vod/media/stream_codecs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proxy::hls;
  const std::span<const std::uint8_t> input(data, size);
  if (const auto init = ts_init_range(input)) {
    if (init->offset != 0 || init->length == 0 || init->length > size || init->length % 188 != 0) std::abort();
  }
  (void)vod::media::avc_parameters(input);
  {
    std::vector<std::uint8_t> spliced(data, data + size - size % vod::client::kTsPacket);
    vod::client::TsSplicer splicer;
    const std::size_t half = spliced.size() / 2 - spliced.size() / 2 % vod::client::kTsPacket;
    splicer.rewrite(std::span(spliced).first(half));
    splicer.splice();
    splicer.rewrite(std::span(spliced).subspan(half));
    splicer.splice();
    splicer.rewrite(std::span(spliced).subspan(half));  // the second half again, spliced twice
    for (std::size_t i = 0; i < spliced.size(); ++i)
      if (spliced[i] != data[i] && (i % vod::client::kTsPacket != 3 || (spliced[i] & 0xf0) != (data[i] & 0xf0))) std::abort();
  }

  // The same bytes as a keyframe index: 16-byte (time, offset) pairs, after an 8-byte movie size
  // and an 8-byte duration.
  if (size < 16) return 0;
  std::uint64_t movie_size = 0, duration = 0;
  std::memcpy(&movie_size, data, 8);
  std::memcpy(&duration, data + 8, 8);
  movie_size >>= 20;  // sizes a movie can have
  vod::proto::KeyframeIndex index;
  for (std::size_t at = 16; at + 16 <= size; at += 16) {
    vod::proto::Keyframe k;
    std::memcpy(&k.time_us, data + at, 8);
    std::memcpy(&k.offset, data + at + 8, 8);
    k.time_us >>= 8;
    k.offset >>= 24;
    index.entries.push_back(k);
  }
  const auto segments = cut_segments(index, movie_size, duration >> 8, 4'000'000);
  for (std::size_t i = 0; i < segments.size(); ++i) {
    const auto& s = segments[i];
    if (s.bytes.length == 0 || s.bytes.offset + s.bytes.length > movie_size || s.duration_us == 0) std::abort();
    if (i + 1 < segments.size() &&
        (s.bytes.offset + s.bytes.length != segments[i + 1].bytes.offset || s.start_us >= segments[i + 1].start_us))
      std::abort();
    if (i + 1 == segments.size() && s.bytes.offset + s.bytes.length != movie_size) std::abort();
  }
  (void)target_duration(segments);
  (void)peak_bandwidth(segments, 0);
  (void)ts_media_playlist(segments, "/movies/x.ts", ts_init_range(input));
  return 0;
}
