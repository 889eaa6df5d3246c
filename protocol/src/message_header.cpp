// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/protocol/message_header.hpp"

#include "decode_support.hpp"

namespace vod::proto {

using detail::fail;
using detail::hex;
using detail::num;

const char* to_string(DecodeFault f) noexcept {
  switch (f) {
    case DecodeFault::truncated: return "truncated";
    case DecodeFault::bad_magic: return "bad magic";
    case DecodeFault::unsupported_version: return "unsupported version";
    case DecodeFault::wrong_type: return "wrong message type";
    case DecodeFault::bad_length: return "bad length";
    case DecodeFault::bad_field: return "bad field";
    case DecodeFault::inconsistent: return "inconsistent fields";
  }
  return "unknown fault";
}

const char* to_string(MessageType t) noexcept {
  switch (t) {
    case MessageType::connect_request: return "connect request";
    case MessageType::accept: return "accept";
    case MessageType::reject: return "reject";
    case MessageType::live_notify: return "live notification";
    case MessageType::live_credit: return "live credit";
    case MessageType::write_record_request: return "write-record request";
    case MessageType::write_record_data: return "write-record datagram";
    case MessageType::write_record_hello: return "write-record hello";
    case MessageType::write_record_cookie: return "write-record cookie";
    case MessageType::write_record_error: return "write-record error";
    case MessageType::segment_request: return "segment request";
    case MessageType::segment_notify: return "segment notification";
  }
  return "unknown message";
}

std::uint8_t defined_in(MessageType type) noexcept {
  return type == MessageType::segment_request || type == MessageType::segment_notify ? kSegmentsVersion : kLayoutVersion1;
}

WireHeader make_header(MessageType type, std::size_t length, std::uint8_t version) {
  WireHeader h;
  h.magic = kMagic;
  h.version = version ? version : defined_in(type);
  h.type = static_cast<std::uint8_t>(type);
  h.length = static_cast<std::uint16_t>(length);
  return h;
}

Decoded<std::size_t> decode_header(Bytes buf, MessageType expected, std::size_t min_length) {
  const std::string what = to_string(expected);
  if (buf.size() < sizeof(WireHeader))
    return fail(DecodeFault::truncated, what + ": " + num(buf.size()) + " bytes, fewer than the 8-byte header");
  const auto h = load_wire<WireHeader>(buf.data());
  if (h.magic.get() != kMagic)
    return fail(DecodeFault::bad_magic, what + ": magic " + hex(h.magic.get()) + " is not rdma-vod's " + hex(kMagic));
  if (h.version < kMinProtocolVersion || h.version > kProtocolVersion)
    return fail(DecodeFault::unsupported_version, what + ": protocol version " + num(h.version) + " not supported (this build speaks " +
                                                      num(kMinProtocolVersion) + ".." + num(kProtocolVersion) + ")");
  if (h.type != static_cast<std::uint8_t>(expected))
    return fail(DecodeFault::wrong_type,
                what + ": message type " + num(h.type) + " where " + num(static_cast<unsigned>(expected)) + " was expected");
  const std::size_t length = h.length.get();
  if (length < min_length)
    return fail(DecodeFault::bad_length, what + ": length field " + num(length) + " is below this message's " + num(min_length) + " bytes");
  if (length > buf.size())
    return fail(DecodeFault::truncated, what + ": length field " + num(length) + " but only " + num(buf.size()) + " bytes arrived");
  return length;
}

}  // namespace vod::proto
