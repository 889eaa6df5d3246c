// {addr, length, rkey}: where a registered, RDMA-readable region lives on the server.
#pragma once

#include <cstdint>
#include <string>

#include "vod/protocol/byte_order.hpp"
#include "vod/protocol/decode_result.hpp"

namespace vod::proto {

struct RegionDescriptor {
  std::uint64_t addr = 0;
  std::uint64_t length = 0;
  std::uint32_t rkey = 0;

  bool empty() const noexcept { return length == 0; }
  bool operator==(const RegionDescriptor&) const = default;
  // The same bytes, whatever the rkey: a catalog entry of a server with memory windows lists no
  // rkey (0), and the accept carries the connection's own.
  bool same_bytes(const RegionDescriptor& o) const noexcept { return addr == o.addr && length == o.length; }
};

struct WireRegionDescriptor {
  be64 addr;
  be64 length;
  be32 rkey;
  be32 reserved;  // zero when sent, ignored when received
};
static_assert(sizeof(WireRegionDescriptor) == 24);

WireRegionDescriptor to_wire(const RegionDescriptor& d) noexcept;

// Validates a received descriptor: addr + length must not wrap around, and an empty region must be
// all zero. `what` names the descriptor in the error ("accept: movie descriptor").
Decoded<RegionDescriptor> from_wire(const WireRegionDescriptor& w, const std::string& what);

}  // namespace vod::proto
