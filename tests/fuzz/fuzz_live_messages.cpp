#include "fuzz_decoders.hpp"
#include "vod/protocol/live_messages.hpp"

// Both live messages arrive on the same receive queues, so one target feeds both decoders.
extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  vod::fuzz::round_trip(data, size, decode_live_notify, [](const LiveNotify& n) { return encode(n); });
  vod::fuzz::round_trip(data, size, decode_live_credit, [](const LiveCredit& c) { return encode(c); });
  return 0;
}
