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
// The versions this build speaks. Version 2 added the segment cache: the segment table region, the
// segment request and notification, a catalog entry and an accept that describe a segment table.
// Version 3 added names that are paths: a catalog whose names hold '/' or are over 128 bytes.
// Version 4 added titles: a catalog that lists titles in a titles area after its names.
// A connect request carries the highest version its sender speaks; every other message, and every
// region layout, carries the version that defined its layout, so a version-1 peer decodes every
// message of a version-2 peer that it knows (docs/protocol.md, "Versions").
inline constexpr std::uint8_t kProtocolVersion = 4;
inline constexpr std::uint8_t kMinProtocolVersion = 1;
inline constexpr std::uint8_t kLayoutVersion1 = 1;    // the layouts version 1 defined
inline constexpr std::uint8_t kSegmentsVersion = 2;   // the first version with the segment cache
inline constexpr std::uint8_t kPathNamesVersion = 3;  // the first version with names that are paths
inline constexpr std::uint8_t kTitlesVersion = 4;     // the first version with titles

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
  segment_request = 11,  // version 2: a client asks for a segment of a cached movie
  segment_notify = 12,   // version 2: the server answers that the segment is resident, or why not
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

// The version that defined `type`'s layout (1, or 2 for the segment messages).
std::uint8_t defined_in(MessageType type) noexcept;

// A header stamped with `version`, by default the version that defined the message.
WireHeader make_header(MessageType type, std::size_t length, std::uint8_t version = 0);

// Checks the common header of a message of `expected` type held in `buf` and returns its length
// field. The length must be at least `min_length` (the smallest message this version defines) and
// at most buf.size(); bytes after it are padding and are ignored. A length above the size this
// build knows is allowed: it is a later minor revision that appended fields, and the caller decodes
// the prefix it knows.
Decoded<std::size_t> decode_header(Bytes buf, MessageType expected, std::size_t min_length);

}  // namespace vod::proto
