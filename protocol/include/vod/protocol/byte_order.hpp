// Big-endian wire fields. Every multi-byte integer in the rdma-vod protocol is big-endian (network
// order), as in rping's buffer advert. A BigEndian<T> is a byte array with alignment 1, so wire
// structs made of them have no padding and may sit at any offset of a received buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

namespace vod::proto {

template <class T>
class BigEndian {
  static_assert(std::is_unsigned_v<T>, "wire integers are unsigned");

 public:
  constexpr BigEndian() = default;
  constexpr BigEndian(T v) { set(v); }  // NOLINT(google-explicit-constructor): wire field assignment

  constexpr T get() const {
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) v = static_cast<T>((v << 8) | bytes_[i]);
    return v;
  }
  constexpr void set(T v) {
    for (std::size_t i = sizeof(T); i-- > 0;) {
      bytes_[i] = static_cast<std::uint8_t>(v & 0xffu);
      v = static_cast<T>(v >> 8);
    }
  }

 private:
  std::uint8_t bytes_[sizeof(T)] = {};
};

using be16 = BigEndian<std::uint16_t>;
using be32 = BigEndian<std::uint32_t>;
using be64 = BigEndian<std::uint64_t>;

static_assert(sizeof(be64) == 8 && alignof(be64) == 1);

// Copies a wire struct out of, or into, a byte buffer of at least sizeof(Wire) bytes.
template <class Wire>
Wire load_wire(const std::uint8_t* p) {
  static_assert(std::is_trivially_copyable_v<Wire> && alignof(Wire) == 1);
  Wire w;
  std::memcpy(&w, p, sizeof w);
  return w;
}

template <class Wire>
void store_wire(std::uint8_t* p, const Wire& w) {
  static_assert(std::is_trivially_copyable_v<Wire> && alignof(Wire) == 1);
  std::memcpy(p, &w, sizeof w);
}

// The bytes of a fixed-size wire struct: what every encoder of a fixed-size message returns.
template <class Wire>
std::vector<std::uint8_t> to_bytes(const Wire& w) {
  std::vector<std::uint8_t> out(sizeof w);
  store_wire(out.data(), w);
  return out;
}

}  // namespace vod::proto
