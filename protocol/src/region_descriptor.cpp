#include "vod/protocol/region_descriptor.hpp"

#include "decode_support.hpp"

namespace vod::proto {

WireRegionDescriptor to_wire(const RegionDescriptor& d) noexcept {
  WireRegionDescriptor w;
  w.addr = d.addr;
  w.length = d.length;
  w.rkey = d.rkey;
  return w;
}

Decoded<RegionDescriptor> from_wire(const WireRegionDescriptor& w, const std::string& what) {
  RegionDescriptor d{w.addr.get(), w.length.get(), w.rkey.get()};
  if (d.addr + d.length < d.addr)
    return detail::fail(DecodeFault::bad_field,
                        what + ": addr " + detail::hex(d.addr) + " + length " + detail::num(d.length) + " wraps around the address space");
  if (d.length == 0 && (d.addr != 0 || d.rkey != 0))
    return detail::fail(DecodeFault::bad_field, what + ": empty region with a non-zero addr or rkey");
  return d;
}

}  // namespace vod::proto
