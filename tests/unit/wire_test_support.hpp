// Helpers for the protocol unit tests: poke big-endian values into encoded messages.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "vod/protocol/decode_result.hpp"

namespace vod::test {

using ByteVector = std::vector<std::uint8_t>;

inline void put_be(ByteVector& v, std::size_t at, std::uint64_t value, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) v.at(at + width - 1 - i) = static_cast<std::uint8_t>(value >> (8 * i));
}
inline std::uint64_t get_be(const ByteVector& v, std::size_t at, std::size_t width) {
  std::uint64_t x = 0;
  for (std::size_t i = 0; i < width; ++i) x = (x << 8) | v.at(at + i);
  return x;
}

// A copy of `good` with a big-endian value poked in: the malformed input of a decoder test.
inline ByteVector with(const ByteVector& good, std::size_t at, std::uint64_t value, std::size_t width) {
  ByteVector v = good;
  put_be(v, at, value, width);
  return v;
}

// Asserts that `result` failed with `fault` and that its message contains `needle`.
template <class T>
::testing::AssertionResult fails_with(const proto::Decoded<T>& result, proto::DecodeFault fault, const std::string& needle) {
  if (result.ok()) return ::testing::AssertionFailure() << "decoded successfully; expected '" << needle << "'";
  if (result.error().fault != fault)
    return ::testing::AssertionFailure() << "fault " << proto::to_string(result.error().fault) << " (" << result.error().message
                                         << "), expected " << proto::to_string(fault);
  if (result.error().message.find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "message '" << result.error().message << "' lacks '" << needle << "'";
  return ::testing::AssertionSuccess();
}

}  // namespace vod::test
