// SPDX-License-Identifier: LGPL-2.1-or-later
#include <cstring>

#include "fuzz_decoders.hpp"
#include "vod/protocol/live_messages.hpp"

// Both live messages arrive on the same receive queues, so one target feeds both decoders. The
// header region is read by RDMA from the same server: the first 8 bytes choose the ring size it is
// checked against, and the rest is the header.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  vod::fuzz::round_trip(data, size, decode_live_notify, [](const LiveNotify& n) { return encode(n); });
  vod::fuzz::round_trip(data, size, decode_live_credit, [](const LiveCredit& c) { return encode(c); });
  if (size < 8) return 0;
  std::uint64_t ring;
  std::memcpy(&ring, data, 8);
  auto decode = [ring](Bytes b) { return decode_live_header(b, ring); };
  vod::fuzz::round_trip(data + 8, size - 8, decode, [](const LiveHeader& h) { return encode(h); });
  return 0;
}
