// The 8-byte header that starts every rdma-vod message: rdma_cm private data, live-stream Sends and
// Write-Record datagrams. docs/protocol.md, "Common header".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "vod/protocol/byte_order.hpp"
#include "vod/protocol/decode_result.hpp"

namespace vod::proto {

inline constexpr std::uint32_t kMagic = 0x52564F44;  // "RVOD"
inline constexpr std::uint8_t kProtocolVersion = 1;  // the major version this build speaks
inline constexpr std::uint8_t kMinProtocolVersion = 1;

enum class MessageType : std::uint8_t {
  connect_request = 1,
  accept = 2,
  reject = 3,
  live_notify = 4,
  live_credit = 5,
  write_record_request = 6,
  write_record_data = 7,
  write_record_hello = 8,
  write_record_cookie = 9,
  write_record_error = 10,
};

const char* to_string(MessageType t) noexcept;

struct WireHeader {
  be32 magic;
  std::uint8_t version;
  std::uint8_t type;
  be16 length;  // bytes of this message as sent, header included; bytes after it are padding
};
static_assert(sizeof(WireHeader) == 8);

using Bytes = std::span<const std::uint8_t>;

WireHeader make_header(MessageType type, std::size_t length);

// Checks the common header of a message of `expected` type held in `buf` and returns its length
// field. The length must be at least `min_length` (the smallest message this version defines) and
// at most buf.size(); bytes after it are padding and are ignored. A length above the size this
// build knows is allowed: it is a later minor revision that appended fields, and the caller decodes
// the prefix it knows.
Decoded<std::size_t> decode_header(Bytes buf, MessageType expected, std::size_t min_length);

}  // namespace vod::proto
