#include "fuzz_decoders.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  vod::fuzz::round_trip(data, size, decode_index, encode_index);
  return 0;
}
