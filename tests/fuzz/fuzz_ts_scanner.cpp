// SPDX-License-Identifier: LGPL-2.1-or-later
// Live sources feed untrusted bytes (UDP from any encoder, stdin, a file) to the MPEG-TS scanner.
// Whatever arrives, it must stay inside the packet, and what it reports must be consistent.
#include <cstdlib>
#include <span>

#include "vod/media/ts_scanner.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::media;
  const std::span<const std::uint8_t> input(data, size);
  TsScanner scanner;
  for (std::size_t at = 0; at + kTsPacketSize <= size; at += kTsPacketSize) {
    auto packet = parse_ts_packet(input.subspan(at, kTsPacketSize));
    if (!packet) continue;
    if (packet->payload.size() > kTsPacketSize - 4 || packet->pid > 0x1fff || packet->continuity_counter > 15) std::abort();
    const auto m = scanner.scan(*packet);
    if (m.random_access && !m.access_unit_start) std::abort();
    if (m.pts_90k && *m.pts_90k >= (1ull << 33)) std::abort();
  }
  (void)pes_pts(input);
  return 0;
}
