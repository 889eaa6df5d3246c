// SPDX-License-Identifier: LGPL-2.1-or-later
#include <cstring>

#include "fuzz_decoders.hpp"
#include "vod/protocol/write_record.hpp"

// Every Write-Record message arrives on the same UDP sockets, so one target feeds every decoder.
// The first 8 input bytes choose the advertised buffer length for the data decoders, so bounds
// checks are explored at every size, including near 2^64.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  vod::fuzz::round_trip(data, size, decode_write_record_request, [](const WriteRecordRequest& r) { return encode(r); });
  vod::fuzz::round_trip(data, size, decode_write_record_hello, [](const WriteRecordHello& h) { return encode(h); });
  vod::fuzz::round_trip(data, size, decode_write_record_cookie, [](const WriteRecordCookie& c) { return encode(c); });
  vod::fuzz::round_trip(data, size, decode_write_record_error, [](const WriteRecordError& e) { return encode(e); });
  if (size < 8) return 0;
  std::uint64_t buffer_length;
  std::memcpy(&buffer_length, data, 8);
  const Bytes datagram(data + 8, size - 8);
  auto decode = [buffer_length](Bytes b) { return decode_write_record_data(b, buffer_length); };
  vod::fuzz::round_trip(data + 8, size - 8, decode, [](const WriteRecordData& d) { return encode(d); });
  // The header alone, as the zero-copy receiver decodes it before the payload is placed: whatever
  // it accepts must lie inside the buffer.
  if (auto h = decode_write_record_data_header(datagram, buffer_length, datagram.size())) {
    const std::uint64_t end = h->buffer_offset + h->record_offset + (datagram.size() - sizeof(WireWriteRecordDataHeader));
    if (h->flags & kRecordStreamOffset) {
      // Live multicast: a stream offset, placed modulo a ring of buffer_length bytes.
      if (h->record_length > buffer_length || h->buffer_offset + h->record_length < h->buffer_offset) __builtin_trap();
    } else if (end > buffer_length || end < h->buffer_offset) {
      __builtin_trap();
    }
  }
  return 0;
}
