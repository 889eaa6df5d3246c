// SPDX-License-Identifier: LGPL-2.1-or-later
#include <cstdlib>
#include <vector>

#include "fuzz_decoders.hpp"
#include "vod/protocol/catalog_layout.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::proto;
  (void)decode_catalog_header(std::span<const std::uint8_t>(data, size));
  // The server's status words, from a catalog or alone (what a client's probe reads): a status that
  // decodes writes back to itself.
  if (auto status = decode_server_status(std::span<const std::uint8_t>(data, size))) {
    std::vector<std::uint8_t> header(64);
    write_server_status(header, *status);
    if (!(*decode_server_status(header) == *status)) std::abort();
  }
  vod::fuzz::round_trip(data, size, decode_catalog, encode_catalog);
  return 0;
}
