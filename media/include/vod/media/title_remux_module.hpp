// SPDX-License-Identifier: LGPL-2.1-or-later
// vod_media's mpegts_media_segment (fmp4_remux.hpp) as a module of its own, vod-title-remux.so,
// loaded by vod-client when a title's renditions are MP4 or Matroska (TitleOptions::remux). Linked
// in, libavformat brings about 140 shared libraries, and each start of vod-client spent over a
// second resolving their symbols in the Soft-RoCE guest (TCG; about 15 ms natively): every command
// paid for what only a remuxed title needs.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace vod::media {

using RemuxSegmentFn = std::vector<std::uint8_t> (*)(std::uint64_t size,
                                                     const std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)>& read_at,
                                                     std::uint64_t start_us, std::uint64_t end_us, unsigned sequence);

// The module's file name, and the function it exports (returning its RemuxSegmentFn).
inline constexpr const char* kTitleRemuxModule = "vod-title-remux.so";
inline constexpr const char* kTitleRemuxEntry = "vod_title_remux_v1";

// Loads the module once (dlopen by name: the program's RUNPATH finds it in the build tree and
// beside an installed program, in LIBDIR/rdma-vod) and returns its function. Throws
// std::runtime_error with dlerror()'s reason when it cannot.
RemuxSegmentFn load_title_remux();

}  // namespace vod::media
