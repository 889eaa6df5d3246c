#include "fuzz_decoders.hpp"
#include "vod/protocol/private_data.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  vod::fuzz::round_trip(data, size, decode_accept, [](const AcceptData& a) { return encode(a); });
  return 0;
}
