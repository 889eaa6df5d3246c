// SPDX-License-Identifier: LGPL-2.1-or-later
// The Range request header (RFC 9110, section 14), for byte ranges of an entity of known size: what
// vod-proxy answers a Range with, and what vod-client get --range reads (its FIRST-LAST is the
// header's byte-range-spec).
#pragma once

#include <cstdint>
#include <string_view>

namespace vod::client {

struct RangeDecision {
  enum class Kind {
    none,           // no Range header, or a unit other than bytes: serve the whole entity (200)
    single,         // one satisfiable range: 206 with Content-Range
    multiple,       // several ranges, some satisfiable: served as the whole entity (200), as RFC 9110 allows
    unsatisfiable,  // no range overlaps the entity: 416 with Content-Range: bytes */size
    invalid,        // not a valid byte-ranges-specifier (syntax, or numbers that overflow): 416 as well
  };
  Kind kind = Kind::none;
  std::uint64_t first = 0;   // for single: the first byte
  std::uint64_t length = 0;  // for single: how many bytes
};

RangeDecision decide_range(std::string_view header, std::uint64_t size) noexcept;

}  // namespace vod::client
