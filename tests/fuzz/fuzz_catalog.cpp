#include "fuzz_decoders.hpp"
#include "vod/protocol/catalog_layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  (void)decode_catalog_header(std::span<const std::uint8_t>(data, size));
  vod::fuzz::round_trip(data, size, decode_catalog, encode_catalog);
  return 0;
}
