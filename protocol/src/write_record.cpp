// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/protocol/write_record.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "decode_support.hpp"
#include "vod/protocol/crc32c.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::proto {

std::uint32_t live_channel_id(std::string_view name) noexcept { return static_cast<std::uint32_t>(name_hash(name)); }

using detail::fail;
using detail::hex;
using detail::num;

// ------------------------------------------------------------------ hello and cookie

std::vector<std::uint8_t> encode(const WriteRecordHello& h) {
  WireWriteRecordHello w{};
  w.header = make_header(MessageType::write_record_hello, sizeof w);
  w.nonce = h.nonce;
  return to_bytes(w);
}

Decoded<WriteRecordHello> decode_write_record_hello(Bytes buf) {
  auto length = decode_header(buf, MessageType::write_record_hello, sizeof(WireWriteRecordHello));
  if (!length) return length.error();
  return WriteRecordHello{load_wire<WireWriteRecordHello>(buf.data()).nonce.get()};
}

std::vector<std::uint8_t> encode(const WriteRecordCookie& c) {
  WireWriteRecordCookie w{};
  w.header = make_header(MessageType::write_record_cookie, sizeof w);
  w.nonce = c.nonce;
  std::copy(c.cookie.begin(), c.cookie.end(), w.cookie);
  w.lifetime_s = c.lifetime_s;
  w.max_payload = c.max_payload;
  return to_bytes(w);
}

Decoded<WriteRecordCookie> decode_write_record_cookie(Bytes buf) {
  auto length = decode_header(buf, MessageType::write_record_cookie, sizeof(WireWriteRecordCookie));
  if (!length) return length.error();
  const auto w = load_wire<WireWriteRecordCookie>(buf.data());
  WriteRecordCookie c;
  c.nonce = w.nonce.get();
  std::copy(std::begin(w.cookie), std::end(w.cookie), c.cookie.begin());
  c.lifetime_s = w.lifetime_s.get();
  c.max_payload = w.max_payload.get();
  if (c.max_payload == 0 || c.max_payload > kWriteRecordMaxPayload)
    return fail(DecodeFault::bad_field,
                "write-record cookie: max payload " + num(c.max_payload) + " outside 1.." + num(kWriteRecordMaxPayload));
  return c;
}

// ------------------------------------------------------------------ request

std::vector<std::uint8_t> encode(const WriteRecordRequest& r) {
  WireWriteRecordRequest w{};
  w.header = make_header(MessageType::write_record_request, sizeof w);
  w.session_id = r.session_id;
  w.epoch = r.epoch;
  w.record_seq = r.record_seq;
  std::copy(r.cookie.begin(), r.cookie.end(), w.cookie);
  w.region = static_cast<std::uint8_t>(r.region);
  w.catalog_generation = r.catalog_generation;
  w.selector = r.selector;
  w.offset = r.offset;
  w.length = r.length;
  w.buffer_offset = r.buffer_offset;
  w.buffer_length = r.buffer_length;
  w.max_payload = r.max_payload;
  w.rate_bps = r.rate_bps;
  return to_bytes(w);
}

WriteRecordIds peek_write_record_ids(Bytes buf) noexcept {
  // The fields are read where WireWriteRecordRequest has them, from a copy of its first bytes.
  if (buf.size() < offsetof(WireWriteRecordRequest, cookie)) return {};
  std::uint8_t head[sizeof(WireWriteRecordRequest)] = {};
  std::memcpy(head, buf.data(), offsetof(WireWriteRecordRequest, cookie));
  const auto w = load_wire<WireWriteRecordRequest>(head);
  return {w.session_id.get(), w.epoch.get(), w.record_seq.get()};
}

Decoded<WriteRecordRequest> decode_write_record_request(Bytes buf) {
  auto length = decode_header(buf, MessageType::write_record_request, sizeof(WireWriteRecordRequest));
  if (!length) return length.error();
  const auto w = load_wire<WireWriteRecordRequest>(buf.data());
  WriteRecordRequest r;
  r.session_id = w.session_id.get();
  r.epoch = w.epoch.get();
  r.record_seq = w.record_seq.get();
  std::copy(std::begin(w.cookie), std::end(w.cookie), r.cookie.begin());
  switch (w.region) {
    case 1:
    case 2:
    case 3: r.region = static_cast<WriteRecordRegion>(w.region); break;
    default:
      return fail(DecodeFault::bad_field, "write-record request: unknown region " + num(w.region) + " (1 catalog, 2 movie, 3 index)");
  }
  if (w.flags != 0)
    return fail(DecodeFault::bad_field, "write-record request: flags " + hex(w.flags) + " name features this version lacks");
  r.catalog_generation = w.catalog_generation.get();
  r.selector = w.selector.get();
  r.offset = w.offset.get();
  r.length = w.length.get();
  r.buffer_offset = w.buffer_offset.get();
  r.buffer_length = w.buffer_length.get();
  r.max_payload = w.max_payload.get();
  r.rate_bps = w.rate_bps.get();
  if (r.length == 0) return fail(DecodeFault::bad_field, "write-record request: a range of 0 bytes");
  if (r.offset + r.length < r.offset)
    return fail(DecodeFault::bad_field, "write-record request: offset " + num(r.offset) + " + length wraps");
  // The record must fit the advertised buffer: computed without overflow.
  if (r.buffer_offset > r.buffer_length || r.length > r.buffer_length - r.buffer_offset)
    return fail(DecodeFault::inconsistent, "write-record request: a record of " + num(r.length) + " bytes at " + num(r.buffer_offset) +
                                               " does not fit the advertised " + num(r.buffer_length) + "-byte buffer");
  if (r.max_payload < 64 || r.max_payload > kWriteRecordMaxPayload)
    return fail(DecodeFault::bad_field,
                "write-record request: max payload " + num(r.max_payload) + " outside 64.." + num(kWriteRecordMaxPayload));
  if (r.rate_bps == 0) return fail(DecodeFault::bad_field, "write-record request: a rate of 0");
  if (r.region == WriteRecordRegion::catalog && r.selector != 0)
    return fail(DecodeFault::inconsistent, "write-record request: the catalog takes no selector");
  return r;
}

// ------------------------------------------------------------------ data

WireWriteRecordDataHeader data_header(const WriteRecordData& d) {
  if (d.payload.size() > kWriteRecordMaxPayload) throw std::invalid_argument("write-record datagram: payload too large");
  WireWriteRecordDataHeader w{};
  w.header = make_header(MessageType::write_record_data, sizeof w + d.payload.size());
  w.session_id = d.session_id;
  w.flags = d.flags;
  w.payload_length = static_cast<std::uint16_t>(d.payload.size());
  w.record_seq = d.record_seq;
  w.record_length = d.record_length;
  w.record_offset = d.record_offset;
  w.buffer_offset = d.buffer_offset;
  w.epoch = d.epoch;
  std::uint8_t head[sizeof w];
  store_wire(head, w);
  w.crc32c = crc32c(crc32c(0, head), d.payload);
  return w;
}

std::vector<std::uint8_t> encode(const WriteRecordData& d) {
  const WireWriteRecordDataHeader w = data_header(d);
  std::vector<std::uint8_t> out(sizeof w + d.payload.size());
  store_wire(out.data(), w);
  std::copy(d.payload.begin(), d.payload.end(), out.begin() + sizeof w);
  return out;
}

Decoded<WriteRecordData> decode_write_record_data_header(Bytes header, std::uint64_t buffer_length, std::size_t datagram_length) {
  const std::string what = "write-record datagram";
  if (header.size() < sizeof(WireWriteRecordDataHeader))
    return fail(DecodeFault::truncated, what + ": " + num(header.size()) + " bytes, fewer than the 56-byte header");
  const auto w = load_wire<WireWriteRecordDataHeader>(header.data());
  if (w.header.magic.get() != kMagic)
    return fail(DecodeFault::bad_magic, what + ": magic " + hex(w.header.magic.get()) + " is not rdma-vod's");
  if (w.header.version < kMinProtocolVersion || w.header.version > kProtocolVersion)
    return fail(DecodeFault::unsupported_version, what + ": protocol version " + num(w.header.version) + " not supported");
  if (w.header.type != static_cast<std::uint8_t>(MessageType::write_record_data))
    return fail(DecodeFault::wrong_type, what + ": message type " + num(w.header.type) + " where 7 was expected");
  const std::size_t payload_length = w.payload_length.get();
  // A datagram is exactly its header and payload: anything else was cut (MSG_TRUNC) or padded.
  if (w.header.length.get() != sizeof w + payload_length || datagram_length != sizeof w + payload_length)
    return fail(DecodeFault::inconsistent, what + ": " + num(datagram_length) + " bytes arrived, the header says " +
                                               num(w.header.length.get()) + " and a payload of " + num(payload_length));
  WriteRecordData d;
  d.session_id = w.session_id.get();
  d.flags = w.flags.get();
  d.epoch = w.epoch.get();
  d.record_seq = w.record_seq.get();
  d.record_length = w.record_length.get();
  d.record_offset = w.record_offset.get();
  d.buffer_offset = w.buffer_offset.get();
  if (d.flags & ~kRecordKnownFlags) return fail(DecodeFault::bad_field, what + ": undefined flags " + hex(d.flags & ~kRecordKnownFlags));
  if (payload_length == 0 && d.record_length != 0) return fail(DecodeFault::bad_field, what + ": empty payload in a non-empty record");
  // Overflow-safe bounds: the payload within the record, the record within the advertised buffer.
  if (d.record_offset > d.record_length || payload_length > d.record_length - d.record_offset)
    return fail(DecodeFault::inconsistent, what + ": payload [" + num(d.record_offset) + ", +" + num(payload_length) +
                                               ") lies outside its " + num(d.record_length) + "-byte record");
  if (d.flags & kRecordStreamOffset) {
    if (d.record_length > buffer_length)
      return fail(DecodeFault::inconsistent,
                  what + ": a live record of " + num(d.record_length) + " bytes is longer than the " + num(buffer_length) + "-byte ring");
    if (d.record_length > ~std::uint64_t{0} - d.buffer_offset)
      return fail(DecodeFault::inconsistent,
                  what + ": live record [" + num(d.buffer_offset) + ", +" + num(d.record_length) + ") wraps the 64-bit stream offset");
    if ((d.flags & kRecordEndOfStream) && d.record_length != 0)
      return fail(DecodeFault::bad_field, what + ": an end of stream with " + num(d.record_length) + " bytes");
    return d;
  }
  if (d.flags & kRecordLiveFlags) return fail(DecodeFault::bad_field, what + ": live flags " + hex(d.flags) + " without a stream offset");
  if (d.buffer_offset > buffer_length || d.record_length > buffer_length - d.buffer_offset)
    return fail(DecodeFault::inconsistent, what + " out of bounds: record [" + num(d.buffer_offset) + ", +" + num(d.record_length) +
                                               ") does not fit the advertised " + num(buffer_length) + "-byte buffer");
  return d;
}

Decoded<WriteRecordData> decode_write_record_data(Bytes datagram, std::uint64_t buffer_length) {
  auto d = decode_write_record_data_header(datagram, buffer_length, datagram.size());
  if (!d) return d.error();
  WriteRecordData out = *d;
  out.payload = datagram.subspan(sizeof(WireWriteRecordDataHeader));
  std::uint8_t head[sizeof(WireWriteRecordDataHeader)];
  std::copy(datagram.begin(), datagram.begin() + sizeof head, head);
  const auto w = load_wire<WireWriteRecordDataHeader>(head);
  auto zeroed = w;
  zeroed.crc32c = 0u;
  store_wire(head, zeroed);
  const std::uint32_t crc = crc32c(crc32c(0, head), out.payload);
  if (crc != w.crc32c.get())
    return fail(DecodeFault::inconsistent, "write-record datagram: CRC32C " + hex(crc) + " but the header says " + hex(w.crc32c.get()));
  return out;
}

// ------------------------------------------------------------------ error

std::vector<std::uint8_t> encode(const WriteRecordError& e) {
  const std::size_t reason_len = std::min(e.reason.size(), kWriteRecordReasonMax);
  WireWriteRecordErrorFixed w{};
  w.header = make_header(MessageType::write_record_error, sizeof w + reason_len);
  w.session_id = e.session_id;
  w.epoch = e.epoch;
  w.record_seq = e.record_seq;
  w.code = static_cast<std::uint16_t>(e.code);
  std::vector<std::uint8_t> out(sizeof w + reason_len);
  store_wire(out.data(), w);
  std::transform(e.reason.begin(), e.reason.begin() + static_cast<std::ptrdiff_t>(reason_len), out.begin() + sizeof w, [](char ch) {
    auto c = static_cast<unsigned char>(ch);
    return static_cast<std::uint8_t>(c >= 0x20 && c <= 0x7e ? c : '?');
  });
  return out;
}

Decoded<WriteRecordError> decode_write_record_error(Bytes buf) {
  auto length = decode_header(buf, MessageType::write_record_error, sizeof(WireWriteRecordErrorFixed));
  if (!length) return length.error();
  const auto w = load_wire<WireWriteRecordErrorFixed>(buf.data());
  const std::size_t reason_len = *length - sizeof w;
  if (reason_len > kWriteRecordReasonMax)
    return fail(DecodeFault::bad_length,
                "write-record error: reason of " + num(reason_len) + " bytes exceeds " + num(kWriteRecordReasonMax));
  WriteRecordError e;
  e.session_id = w.session_id.get();
  e.epoch = w.epoch.get();
  e.record_seq = w.record_seq.get();
  const auto code = w.code.get();
  if (code < 1 || code > kMaxRejectCode) return fail(DecodeFault::bad_field, "write-record error: unknown code " + num(code));
  e.code = static_cast<RejectCode>(code);
  for (std::size_t i = 0; i < reason_len; ++i) {
    const auto c = buf[sizeof w + i];
    if (c < 0x20 || c > 0x7e) return fail(DecodeFault::bad_field, "write-record error: reason byte " + num(i) + " is not printable ASCII");
    e.reason.push_back(static_cast<char>(c));
  }
  return e;
}

}  // namespace vod::proto
