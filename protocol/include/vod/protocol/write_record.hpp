// UDP Write-Record mode, a software datagram RDMA Write-Record: the receiver advertises a buffer;
// each datagram says where its payload goes in that buffer, and the receiver places it there and
// reports which byte ranges of each record arrived. docs/protocol.md, "Write-Record datagrams".
// Specified in v1; the Write-Record issue implements the endpoints.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vod/protocol/message_header.hpp"

namespace vod::proto {

struct WriteRecordAdvert {
  std::uint32_t session_id = 0;     // chosen by the receiver; every data datagram carries it
  std::uint32_t flags = 0;          // none defined in v1
  std::uint64_t buffer_length = 0;  // bytes the sender may place into
  std::uint32_t max_payload = 0;    // largest payload per datagram the receiver accepts

  bool operator==(const WriteRecordAdvert&) const = default;
};

struct WireWriteRecordAdvert {
  WireHeader header;  // type write_record_advert, length 32
  be32 session_id;
  be32 flags;
  be64 buffer_length;
  be32 max_payload;
  be32 reserved;
};
static_assert(sizeof(WireWriteRecordAdvert) == 32);

inline constexpr std::uint16_t kRecordLastDatagram = 1u << 0;  // the sender sends no more of this record
inline constexpr std::uint16_t kRecordKnownFlags = kRecordLastDatagram;

struct WriteRecordData {
  std::uint32_t session_id = 0;
  std::uint16_t flags = 0;
  std::uint64_t record_seq = 0;     // which record this datagram belongs to
  std::uint64_t record_length = 0;  // total bytes of the record
  std::uint64_t record_offset = 0;  // where this payload sits within the record
  std::uint64_t buffer_offset = 0;  // where the record starts in the advertised buffer
  Bytes payload;                    // points into the decoded datagram

  bool operator==(const WriteRecordData& o) const {
    return session_id == o.session_id && flags == o.flags && record_seq == o.record_seq &&
           record_length == o.record_length && record_offset == o.record_offset &&
           buffer_offset == o.buffer_offset && payload.size() == o.payload.size() &&
           std::equal(payload.begin(), payload.end(), o.payload.begin());
  }
};

struct WireWriteRecordDataHeader {
  WireHeader header;  // type write_record_data, length 48 + payload_length
  be32 session_id;
  be16 flags;
  be16 payload_length;
  be64 record_seq;
  be64 record_length;
  be64 record_offset;
  be64 buffer_offset;
};
static_assert(sizeof(WireWriteRecordDataHeader) == 48);

inline constexpr std::size_t kWriteRecordMaxPayload = 65507 - sizeof(WireWriteRecordDataHeader);

std::vector<std::uint8_t> encode(const WriteRecordAdvert& a);
Decoded<WriteRecordAdvert> decode_write_record_advert(Bytes buf);

std::vector<std::uint8_t> encode(const WriteRecordData& d);
// Decodes a datagram for a receiver whose advertised buffer holds `buffer_length` bytes: a payload
// that would land outside [0, buffer_length) is an error, never a write.
Decoded<WriteRecordData> decode_write_record_data(Bytes datagram, std::uint64_t buffer_length);

}  // namespace vod::proto
