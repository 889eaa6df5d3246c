// SPDX-License-Identifier: LGPL-2.1-or-later
#include "fuzz_decoders.hpp"
#include "vod/protocol/live_window.hpp"

// A live channel's DVR window index, as a client reads it by RDMA (or over UDP) from a server: its
// header (whole, and alone, as rdmasrc's seeking query reads it), the keyframe marks (whole, and a
// slot at a time, as a viewer reads those published since its last read), the window's entry name.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  vod::fuzz::round_trip(data, size, decode_window, [](const WindowIndex& w) { return encode(w); });
  if (auto w = decode_window(std::span<const std::uint8_t>(data, size)); w && !w->marks.empty())
    (void)keyframe_at_or_before(*w, w->marks.front().publish_time_us + 1);
  const std::span<const std::uint8_t> bytes(data, size);
  if (auto h = decode_window_header(bytes); h) {
    const auto whole = decode_window(bytes);
    if (whole && whole->header != *h) __builtin_trap();  // the header alone decodes as the whole region's
  }
  for (std::size_t at = 0; at + sizeof(WireWindowMark) <= size && at < 4096; at += sizeof(WireWindowMark)) {
    const auto slot = bytes.subspan(at, sizeof(WireWindowMark));
    const std::uint64_t k =
        load_wire<WireWindowMark>(slot.data()).number_end.get() - 1;  // the slot's number_end, as a viewer reading mark k expects it
    if (auto m = decode_window_mark(slot, k); m && m->number != k + 1) __builtin_trap();
  }
  (void)window_channel(std::string_view(reinterpret_cast<const char*>(data), std::min<std::size_t>(size, 2048)));
  return 0;
}
