// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/test_drop.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

namespace vod::server::udp {

TestDrop parse_test_drop(const std::string& text) {
  TestDrop d;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const std::size_t colon = item.find(':');
    char* end = nullptr;
    const unsigned long n = colon == std::string::npos ? 0 : std::strtoul(item.c_str() + colon + 1, &end, 10);
    if (colon == std::string::npos || n == 0 || *end)
      throw std::invalid_argument("--udp-test-drop: '" + item + "' is not KIND:N with N > 0");
    const std::string kind = item.substr(0, colon);
    if (kind == "last") d.last_of_record = static_cast<unsigned>(n);
    else if (kind == "record") d.whole_record = static_cast<unsigned>(n);
    else if (kind == "datagram") d.datagram = static_cast<unsigned>(n);
    else throw std::invalid_argument("--udp-test-drop: unknown kind '" + kind + "' (last, record, datagram)");
    at = comma + 1;
  }
  return d;
}

TestDropper::Mark TestDropper::admit(std::uint32_t session_id, std::uint64_t record_seq) {
  if (!active()) return {};
  const bool repair = !seen_.insert({session_id, record_seq}).second;
  return {repair ? 0 : admitted_++, repair};
}

bool TestDropper::drops(const Mark& m, bool last) noexcept {
  if (!active() || m.repair) return false;
  const std::uint64_t datagram = ++built_;
  const bool drop = (drop_.whole_record && m.ordinal % drop_.whole_record == drop_.whole_record - 1) ||
                    (drop_.last_of_record && last && m.ordinal % drop_.last_of_record == drop_.last_of_record - 1) ||
                    (drop_.datagram && datagram % drop_.datagram == 0);
  dropped_ += drop;
  return drop;
}

}  // namespace vod::server::udp
