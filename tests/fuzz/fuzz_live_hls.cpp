// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel's bytes come from any encoder (UDP, stdin, a file), through vod-server, to
// vod-proxy, which cuts them into chunks at frames (LiveChunker) and packages them as LL-HLS
// (LiveHlsPackager). Whatever arrives, in whatever pieces, with discontinuities anywhere: every
// segment and part is whole TS packets, a complete segment is its parts, the window stays bounded,
// and the playlist is well formed.
#include <cstdlib>
#include <span>
#include <string>

#include "live_chunker.hpp"
#include "live_hls_packager.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proxy;
  if (size < 2) return 0;
  // The first byte: the piece size the session delivers; the second: where discontinuities fall.
  const std::size_t piece = 1 + data[0] * 7u;
  const unsigned disc_every = data[1];
  const std::span<const std::uint8_t> input(data + 2, size - 2);
  LiveHlsSettings settings;
  settings.segment_seconds = 1.0;
  settings.part_seconds = 0.2;
  settings.window_segments = 3;
  settings.max_segment_bytes = 64 * 1024;
  LiveChunker chunker;
  LiveHlsPackager packager(settings, 7);
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1'800'000'000));
  unsigned n = 0;
  for (std::size_t at = 0; at < input.size(); at += piece, ++n) {
    const auto bytes = input.subspan(at, std::min(piece, input.size() - at));
    const bool discontinuity = disc_every && n % disc_every == disc_every - 1;
    for (const auto& chunk : chunker.feed(bytes, discontinuity)) packager.feed(*chunk, now);
  }
  if (packager.bytes() > (settings.window_segments + 1) * (settings.max_segment_bytes + input.size())) std::abort();
  for (std::uint64_t m = packager.first_msn(); m <= packager.last_msn(); ++m) {
    std::string parts;
    for (std::size_t k = 0; auto p = packager.part(m, k); ++k) {
      if (p->empty() || p->size() % vod::media::kTsPacketSize != 0) std::abort();
      parts += std::string(*p);
    }
    if (auto s = packager.segment(m)) {
      if (s->size() % vod::media::kTsPacketSize != 0 || std::string(*s) != parts) std::abort();
    }
  }
  const std::string playlist = packager.playlist();
  if (packager.ready() != !playlist.empty()) std::abort();
  if (!playlist.empty() && (playlist.rfind("#EXTM3U\n", 0) != 0 || playlist.find("#EXT-X-PRELOAD-HINT:TYPE=PART") == std::string::npos))
    std::abort();
  return 0;
}
