// SPDX-License-Identifier: LGPL-2.1-or-later
#include "fuzz_decoders.hpp"
#include "vod/protocol/live_window.hpp"

// A live channel's DVR window index, as a client reads it by RDMA (or over UDP) from a server: its
// header, the keyframe marks, the window's entry name.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  vod::fuzz::round_trip(data, size, decode_window, [](const WindowIndex& w) { return encode(w); });
  if (auto w = decode_window(std::span<const std::uint8_t>(data, size)); w && !w->marks.empty())
    (void)keyframe_at_or_before(*w, w->marks.front().publish_time_us + 1);
  (void)window_channel(std::string_view(reinterpret_cast<const char*>(data), std::min<std::size_t>(size, 2048)));
  return 0;
}
