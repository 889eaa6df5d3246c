#include <cstring>

#include "fuzz_decoders.hpp"
#include "vod/protocol/write_record.hpp"

// Datagrams and adverts share a UDP socket. The first 8 input bytes choose the advertised buffer
// length for the data decoder, so bounds checks are explored at every size, including near 2^64.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  vod::fuzz::round_trip(data, size, decode_write_record_advert, [](const WriteRecordAdvert& a) { return encode(a); });
  if (size < 8) return 0;
  std::uint64_t buffer_length;
  std::memcpy(&buffer_length, data, 8);
  auto decode = [buffer_length](Bytes b) { return decode_write_record_data(b, buffer_length); };
  vod::fuzz::round_trip(data + 8, size - 8, decode, [](const WriteRecordData& d) { return encode(d); });
  return 0;
}
