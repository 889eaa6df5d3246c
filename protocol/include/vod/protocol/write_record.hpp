// SPDX-License-Identifier: LGPL-2.1-or-later
// UDP Write-Record, a software datagram RDMA Write-Record (Grant, Rashti, Balaji, Afsahi): the
// receiver advertises a buffer with each request; the sender's self-describing datagrams say where
// their payload goes in that buffer, and the receiver places it there and reports which byte ranges
// of each record arrived. docs/protocol.md, "Write-Record over UDP"; docs/write-record.md.
//
//   client                                    server
//   hello (nonce, padded to 64 B)   ------->
//                                   <-------  cookie (nonce, cookie): never larger than the hello
//   request (cookie, session, epoch,
//     region, range, buffer offset
//     and length, payload, rate)    ------->
//                                   <-------  data datagrams of the record, paced to the rate
//   request for the missing ranges  ------->  (a NACK is simply a request for less)
//                                   <-------  error (code, reason): never larger than the request
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vod/protocol/message_header.hpp"
#include "vod/protocol/private_data.hpp"

namespace vod::proto {

inline constexpr std::uint16_t kWriteRecordPort = 7471;  // the documented UDP port
inline constexpr std::size_t kCookieSize = 16;
using Cookie = std::array<std::uint8_t, kCookieSize>;

// ------------------------------------------------------------------ hello and cookie

// A client's first datagram: it proves nothing yet, so everything the server answers it with is at
// most its size (the server can never amplify). Padded with zeros to kWriteRecordHelloSize.
struct WriteRecordHello {
  std::uint64_t nonce = 0;  // echoed in the cookie, so the client knows the answer is to it
  bool operator==(const WriteRecordHello&) const = default;
};
inline constexpr std::size_t kWriteRecordHelloSize = 64;

struct WireWriteRecordHello {
  WireHeader header;  // type write_record_hello, length 64
  be64 nonce;
  std::uint8_t padding[48];  // zero
};
static_assert(sizeof(WireWriteRecordHello) == kWriteRecordHelloSize);

struct WriteRecordCookie {
  std::uint64_t nonce = 0;
  Cookie cookie{};                // what the client's requests carry: proof it receives at its address
  std::uint32_t lifetime_s = 0;   // how long the cookie stays valid (at least)
  std::uint32_t max_payload = 0;  // the largest payload the server sends
  bool operator==(const WriteRecordCookie&) const = default;
};

struct WireWriteRecordCookie {
  WireHeader header;  // type write_record_cookie, length 48
  be64 nonce;
  std::uint8_t cookie[kCookieSize];
  be32 lifetime_s;
  be32 max_payload;
  be64 reserved;
};
static_assert(sizeof(WireWriteRecordCookie) == 48 && sizeof(WireWriteRecordCookie) <= kWriteRecordHelloSize);

// ------------------------------------------------------------------ request

// Which region of the server a request reads: the same regions an RDMA client reads.
enum class WriteRecordRegion : std::uint8_t { catalog = 1, movie = 2, index = 3 };

struct WriteRecordRequest {
  std::uint32_t session_id = 0;  // chosen by the client; every datagram of the answer carries it
  std::uint32_t epoch = 0;       // the client's epoch: a seek moves it on, older datagrams are dropped
  std::uint64_t record_seq = 0;  // the record the answer is; chosen by the client
  Cookie cookie{};
  WriteRecordRegion region = WriteRecordRegion::catalog;
  std::uint32_t catalog_generation = 0;  // of the catalog the client's selector refers to (0: any)
  std::uint64_t selector = 0;            // movie and index: FNV-1a 64 of the movie's name; catalog: 0
  std::uint64_t offset = 0;              // in the region
  std::uint64_t length = 0;              // bytes wanted (the server may refuse more than it allows)
  std::uint64_t buffer_offset = 0;       // where in the client's buffer the record starts
  std::uint64_t buffer_length = 0;       // the advertised buffer's size: datagrams must fit it
  std::uint32_t max_payload = 0;         // the largest payload the client takes (its path MTU)
  std::uint64_t rate_bps = 0;            // the rate it can take; the server may send slower

  bool operator==(const WriteRecordRequest&) const = default;
};

struct WireWriteRecordRequest {
  WireHeader header;  // type write_record_request, length 104
  be32 session_id;
  be32 epoch;
  be64 record_seq;
  std::uint8_t cookie[kCookieSize];
  std::uint8_t region;
  std::uint8_t flags;  // none defined: a set bit is refused
  be16 reserved0;
  be32 catalog_generation;
  be64 selector;
  be64 offset;
  be64 length;
  be64 buffer_offset;
  be64 buffer_length;
  be32 max_payload;
  be32 reserved1;
  be64 rate_bps;
};
static_assert(sizeof(WireWriteRecordRequest) == 104);

// ------------------------------------------------------------------ data

inline constexpr std::uint16_t kRecordLastDatagram = 1u << 0;  // the sender sends no more of this record
// Live multicast (vod-server --live-multicast): buffer_offset is the record's offset in the channel's
// stream, not in an advertised buffer; each receiver places the record at that offset modulo its own
// ring's size, so one datagram serves any number of receivers. session_id is the channel's id
// (live_channel_id), epoch its stream id, record_seq the channel's record number (0, 1, 2, ...).
inline constexpr std::uint16_t kRecordStreamOffset = 1u << 1;
inline constexpr std::uint16_t kRecordKeyframe = 1u << 2;       // the record starts with a keyframe (and PAT/PMT)
inline constexpr std::uint16_t kRecordDiscontinuity = 1u << 3;  // the source restarted before this record
inline constexpr std::uint16_t kRecordEndOfStream = 1u << 4;    // an empty record: the source stopped here
inline constexpr std::uint16_t kRecordUnitStart = 1u << 5;      // an access unit starts at the record's first byte
inline constexpr std::uint16_t kRecordLiveFlags = kRecordKeyframe | kRecordDiscontinuity | kRecordEndOfStream | kRecordUnitStart;
inline constexpr std::uint16_t kRecordKnownFlags = kRecordLastDatagram | kRecordStreamOffset | kRecordLiveFlags;

// The id a live channel's multicast datagrams carry as their session: the low 32 bits of the FNV-1a
// 64 hash of its name (the catalog's selector).
std::uint32_t live_channel_id(std::string_view name) noexcept;

struct WriteRecordData {
  std::uint32_t session_id = 0;
  std::uint16_t flags = 0;
  std::uint32_t epoch = 0;
  std::uint64_t record_seq = 0;     // which record this datagram belongs to
  std::uint64_t record_length = 0;  // total bytes of the record
  std::uint64_t record_offset = 0;  // where this payload sits within the record
  std::uint64_t buffer_offset = 0;  // where the record starts in the advertised buffer
  Bytes payload;                    // points into the decoded datagram

  bool operator==(const WriteRecordData& o) const {
    return session_id == o.session_id && flags == o.flags && epoch == o.epoch && record_seq == o.record_seq &&
           record_length == o.record_length && record_offset == o.record_offset && buffer_offset == o.buffer_offset &&
           payload.size() == o.payload.size() && std::equal(payload.begin(), payload.end(), o.payload.begin());
  }
};

struct WireWriteRecordDataHeader {
  WireHeader header;  // type write_record_data, length 56 + payload_length
  be32 session_id;
  be16 flags;
  be16 payload_length;
  be64 record_seq;
  be64 record_length;
  be64 record_offset;
  be64 buffer_offset;
  be32 epoch;
  be32 crc32c;  // CRC32C (Castagnoli) of the header with this field zero, then the payload
};
static_assert(sizeof(WireWriteRecordDataHeader) == 56);

inline constexpr std::size_t kWriteRecordMaxPayload = 65507 - sizeof(WireWriteRecordDataHeader);

// ------------------------------------------------------------------ error

inline constexpr std::size_t kWriteRecordReasonMax = 48;

struct WriteRecordError {
  std::uint32_t session_id = 0;
  std::uint32_t epoch = 0;
  std::uint64_t record_seq = 0;  // of the request refused (0 for a hello)
  RejectCode code = RejectCode::malformed_request;
  std::string reason;  // printable ASCII, at most kWriteRecordReasonMax bytes

  bool operator==(const WriteRecordError&) const = default;
};

struct WireWriteRecordErrorFixed {
  WireHeader header;  // type write_record_error, length 32 + reason bytes
  be32 session_id;
  be32 epoch;
  be64 record_seq;
  be16 code;
  std::uint8_t reserved[6];
  // followed by the reason
};
static_assert(sizeof(WireWriteRecordErrorFixed) == 32 &&
              sizeof(WireWriteRecordErrorFixed) + kWriteRecordReasonMax <= sizeof(WireWriteRecordRequest));

// ------------------------------------------------------------------ codecs

std::vector<std::uint8_t> encode(const WriteRecordHello& h);
std::vector<std::uint8_t> encode(const WriteRecordCookie& c);
std::vector<std::uint8_t> encode(const WriteRecordRequest& r);
std::vector<std::uint8_t> encode(const WriteRecordError& e);
// The data header with its CRC, for a payload sent beside it (gather I/O: the payload is not
// copied). encode(WriteRecordData) gives header and payload in one buffer.
WireWriteRecordDataHeader data_header(const WriteRecordData& d);
std::vector<std::uint8_t> encode(const WriteRecordData& d);

Decoded<WriteRecordHello> decode_write_record_hello(Bytes buf);
Decoded<WriteRecordCookie> decode_write_record_cookie(Bytes buf);
Decoded<WriteRecordRequest> decode_write_record_request(Bytes buf);
// What identifies a request (session, epoch, record) when it does not decode, as far as it arrived
// (all 0 when it is shorter than those fields): the error that answers it echoes them.
struct WriteRecordIds {
  std::uint32_t session_id = 0, epoch = 0;
  std::uint64_t record_seq = 0;
};
WriteRecordIds peek_write_record_ids(Bytes buf) noexcept;
Decoded<WriteRecordError> decode_write_record_error(Bytes buf);
// Decodes a datagram for a receiver whose advertised buffer holds `buffer_length` bytes: a payload
// that would land outside [0, buffer_length) is an error, never a write; so is a bad CRC. With
// kRecordStreamOffset (live multicast) the buffer is a ring of `buffer_length` bytes: the record
// must be no longer than the ring, and its stream offsets must not wrap 64 bits. Live flags
// without kRecordStreamOffset, and an end of stream with bytes, are errors.
Decoded<WriteRecordData> decode_write_record_data(Bytes datagram, std::uint64_t buffer_length);
// The header alone (the payload may not have been received yet): everything but the CRC.
Decoded<WriteRecordData> decode_write_record_data_header(Bytes header, std::uint64_t buffer_length, std::size_t datagram_length);

}  // namespace vod::proto
