// SPDX-License-Identifier: LGPL-2.1-or-later
// The crossover between the two ways a Read reaches a reader (read_planner.hpp): straight into its
// registered buffer (direct), or into the ring and then copied (indirect). Below it a part of a
// request goes through the ring: an extra small Read of its own costs more than copying it, and the
// whole block read into the ring also holds the bytes the next request wants. A pure decider with a
// table test (tests/unit/direct_crossover_test.cpp); never measured on the open path.
#pragma once

#include <cstddef>
#include <string_view>

namespace vod::client::engine {

// By device kind, from the device's name: software devices (rxe, siw), where the "NIC" is a kernel
// thread that copies every byte anyway and a Read's fixed cost is small against it, about 16 KiB;
// an RNIC, where a Read's fixed cost is a doorbell and a round trip and a copy is the only CPU work
// per byte, about 256 KiB (the figures of the line of work docs/client.md cites). Capped at `chunk`:
// a direct part is never wider than a block.
std::size_t direct_crossover(std::string_view device_name, std::size_t chunk) noexcept;

}  // namespace vod::client::engine
