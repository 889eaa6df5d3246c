// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-title-remux.so: mpegts_media_segment behind one C entry point (title_remux_module.hpp).
#include "vod/media/title_remux_module.hpp"
#include "vod/media/fmp4_remux.hpp"

namespace {

std::vector<std::uint8_t> remux(std::uint64_t size, const std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)>& read_at,
                                std::uint64_t start_us, std::uint64_t end_us, unsigned sequence) {
  return vod::media::mpegts_media_segment(size, read_at, start_us, end_us, sequence);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) vod::media::RemuxSegmentFn vod_title_remux_v1() { return &remux; }
