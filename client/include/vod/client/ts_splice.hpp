// SPDX-License-Identifier: LGPL-2.1-or-later
// MPEG-TS spliced from several files (a title's renditions, switched at aligned keyframes) as one
// stream: each PID's continuity counters carry on across a splice, as a demuxer expects them to.
// Within one file the counters are kept as they are (a duplicate packet or a gap the file has stays
// one); at a splice each PID's new counters are shifted to follow the last one written. The
// renditions of one title come from one muxer with the same PIDs and tables, so nothing else needs
// rewriting; their timestamps share the title's timeline. Pure over the bytes it is given: table
// tests in tests/unit/ts_splice_test.cpp.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace vod::client {

inline constexpr std::size_t kTsPacket = 188;

class TsSplicer {
 public:
  // Rewrites the continuity counters of whole packets in `packets` (a multiple of 188 bytes; a
  // packet without the sync byte is left as it is) in place.
  void rewrite(std::span<std::uint8_t> packets);
  // What follows comes from another file (or another place in one): its counters are shifted.
  void splice() noexcept;

 private:
  struct Pid {
    std::optional<std::uint8_t> last;  // the last counter written, of a packet with payload
    std::uint8_t shift = 0;            // added to the file's counters (mod 16)
    bool fresh = true;                 // no packet since the last splice: the shift is not known yet
  };
  std::array<Pid, 8192> pids_{};
};

}  // namespace vod::client
