// SPDX-License-Identifier: LGPL-2.1-or-later
#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "vod/client/multicast_assembler.hpp"
#include "vod/protocol/write_record.hpp"

// A live multicast receiver's whole path for a run of datagrams: each is decoded as a receiver with
// a 64 KiB ring decodes it, placed, and the stream read out, while a clock advances so that hole
// timeouts fire. Input: records of [2-byte length][1-byte clock step (ms)][datagram]. What comes
// out can never exceed what was placed, and nothing is read or written outside the ring (ASan).
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod;
  constexpr std::size_t kRing = 64 * 1024;
  client::MulticastAssembler a(0x1234abcd, kRing, std::chrono::milliseconds(50));
  auto now = client::MulticastAssembler::Clock::time_point{} + std::chrono::hours(1);
  std::vector<std::uint8_t> out(4096);
  std::uint64_t delivered = 0;
  std::size_t at = 0;
  while (at + 3 <= size) {
    const std::size_t len = std::min<std::size_t>(static_cast<std::size_t>(data[at]) << 8 | data[at + 1], size - at - 3);
    now += std::chrono::milliseconds(data[at + 2]);
    const proto::Bytes datagram(data + at + 3, len);
    at += 3 + len;
    if (auto d = proto::decode_write_record_data(datagram, kRing)) a.place(*d, now);
    for (int i = 0; i < 64; ++i) {
      const auto c = a.read(out, now);
      if (!c.bytes && !c.end_of_stream && !c.finished) break;
      delivered += c.bytes;
    }
  }
  if (delivered > a.stats().placed_bytes) __builtin_trap();
  return 0;
}
