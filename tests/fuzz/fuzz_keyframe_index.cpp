#include "fuzz_decoders.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  // Re-encoded in version 2, whatever it was read in: its CRC is checked on the way back.
  vod::fuzz::round_trip(data, size, decode_index, [](const KeyframeIndex& i) { return encode_index(i, kSegmentsVersion); });
  return 0;
}
