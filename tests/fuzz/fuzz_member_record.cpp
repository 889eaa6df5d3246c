// SPDX-License-Identifier: LGPL-2.1-or-later
// Member records from etcd (cluster/member_record.hpp): anything a writer of the fleet's prefix
// stores. The input is KEY-ID '\n' JSON. A record that decodes must encode and decode to itself.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "vod/cluster/member_record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto nl = input.find('\n');
  const std::string_view key = nl == std::string_view::npos ? std::string_view{} : input.substr(0, nl);
  const std::string_view json = nl == std::string_view::npos ? input : input.substr(nl + 1);
  const auto r = vod::cluster::decode_member(key, json);
  if (!r) return 0;
  const auto again = vod::cluster::decode_member(r->id(), vod::cluster::encode_member(*r));
  if (!again || !(*again == *r)) std::abort();
  return 0;
}
