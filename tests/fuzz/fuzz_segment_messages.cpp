// SPDX-License-Identifier: LGPL-2.1-or-later
#include <cstring>

#include "fuzz_decoders.hpp"
#include "vod/protocol/segment_table.hpp"

// The segment cache's wire data: the request (server side) and the notification (client side)
// arrive on receive queues; the table region is read by RDMA. The first 8 bytes choose the region
// length the header is checked against, and the rest is the region: its header, then its entries.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  vod::fuzz::round_trip(data, size, decode_segment_request, [](const SegmentRequest& r) { return encode(r); });
  vod::fuzz::round_trip(data, size, decode_segment_notify, [](const SegmentNotify& n) { return encode(n); });
  if (size < 8) return 0;
  std::uint64_t length;
  std::memcpy(&length, data, 8);
  const Bytes region(data + 8, size - 8);
  auto header = decode_segment_table_header(region, length);
  if (!header || region.size() < kSegmentTableHeaderSize) return 0;
  const std::uint32_t slots = static_cast<std::uint32_t>(header->arena_length / header->segment_size);
  auto entries = decode_segment_entries(region.subspan(kSegmentTableHeaderSize), header->segment_count, slots - 1);
  if (!entries) return 0;
  const auto bytes = encode_segment_table(*header, *entries);
  auto again = decode_segment_table_header(bytes, bytes.size());
  if (!again || !(*again == *header)) std::abort();
  for (const SegmentEntry& e : *entries)
    if (!(*unpack_segment_entry(pack(e)) == e)) std::abort();
  return 0;
}
