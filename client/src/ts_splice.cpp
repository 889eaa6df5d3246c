// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/ts_splice.hpp"

namespace vod::client {

void TsSplicer::splice() noexcept {
  for (Pid& p : pids_) p.fresh = true;
}

void TsSplicer::rewrite(std::span<std::uint8_t> packets) {
  for (std::size_t at = 0; at + kTsPacket <= packets.size(); at += kTsPacket) {
    std::uint8_t* b = packets.data() + at;
    if (b[0] != 0x47) continue;
    const unsigned pid = (static_cast<unsigned>(b[1] & 0x1f) << 8) | b[2];
    if (pid == 0x1fff) continue;  // null packets carry no counter that counts
    Pid& p = pids_[pid];
    const bool payload = (b[3] & 0x10) != 0;
    const std::uint8_t cc = b[3] & 0x0f;
    if (p.fresh) {
      // The first packet of this PID after a splice: a payload packet follows the last one written
      // (+1); one without payload repeats it (ISO 13818-1 2.4.3.3).
      p.shift = p.last ? static_cast<std::uint8_t>((*p.last + (payload ? 1 : 0) - cc) & 0x0f) : 0;
      p.fresh = false;
    }
    const auto out = static_cast<std::uint8_t>((cc + p.shift) & 0x0f);
    b[3] = static_cast<std::uint8_t>((b[3] & 0xf0) | out);
    if (payload) p.last = out;
  }
}

}  // namespace vod::client
