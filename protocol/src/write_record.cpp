#include "vod/protocol/write_record.hpp"

#include <algorithm>
#include <stdexcept>

#include "decode_support.hpp"

namespace vod::proto {

using detail::fail;
using detail::hex;
using detail::num;

std::vector<std::uint8_t> encode(const WriteRecordAdvert& a) {
  WireWriteRecordAdvert w{};
  w.header = make_header(MessageType::write_record_advert, sizeof w);
  w.session_id = a.session_id;
  w.flags = a.flags;
  w.buffer_length = a.buffer_length;
  w.max_payload = a.max_payload;
  return to_bytes(w);
}

Decoded<WriteRecordAdvert> decode_write_record_advert(Bytes buf) {
  auto length = decode_header(buf, MessageType::write_record_advert, sizeof(WireWriteRecordAdvert));
  if (!length) return length.error();
  const auto w = load_wire<WireWriteRecordAdvert>(buf.data());
  WriteRecordAdvert a{w.session_id.get(), w.flags.get(), w.buffer_length.get(), w.max_payload.get()};
  if (a.flags != 0) return fail(DecodeFault::bad_field, "write-record advert: flags " + hex(a.flags) + " not defined in v1");
  if (a.buffer_length == 0) return fail(DecodeFault::bad_field, "write-record advert: empty buffer");
  if (a.max_payload == 0 || a.max_payload > kWriteRecordMaxPayload)
    return fail(DecodeFault::bad_field, "write-record advert: max payload " + num(a.max_payload) + " outside 1.." +
                                            num(kWriteRecordMaxPayload));
  return a;
}

std::vector<std::uint8_t> encode(const WriteRecordData& d) {
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
  std::vector<std::uint8_t> out(sizeof w + d.payload.size());
  store_wire(out.data(), w);
  std::copy(d.payload.begin(), d.payload.end(), out.begin() + sizeof w);
  return out;
}

Decoded<WriteRecordData> decode_write_record_data(Bytes datagram, std::uint64_t buffer_length) {
  auto length = decode_header(datagram, MessageType::write_record_data, sizeof(WireWriteRecordDataHeader));
  if (!length) return length.error();
  const auto w = load_wire<WireWriteRecordDataHeader>(datagram.data());
  const std::size_t payload_length = w.payload_length.get();
  if (sizeof w + payload_length != *length)
    return fail(DecodeFault::inconsistent, "write-record datagram: payload length " + num(payload_length) +
                                               " but the header's length field says " + num(*length - sizeof w));
  WriteRecordData d;
  d.session_id = w.session_id.get();
  d.flags = w.flags.get();
  d.record_seq = w.record_seq.get();
  d.record_length = w.record_length.get();
  d.record_offset = w.record_offset.get();
  d.buffer_offset = w.buffer_offset.get();
  d.payload = datagram.subspan(sizeof w, payload_length);
  if (d.flags & ~kRecordKnownFlags)
    return fail(DecodeFault::bad_field, "write-record datagram: undefined flags " + hex(d.flags & ~kRecordKnownFlags));
  if (payload_length == 0 && d.record_length != 0)
    return fail(DecodeFault::bad_field, "write-record datagram: empty payload in a non-empty record");
  // Overflow-safe bounds: the payload within the record, the record within the advertised buffer.
  if (d.record_offset > d.record_length || payload_length > d.record_length - d.record_offset)
    return fail(DecodeFault::inconsistent, "write-record datagram: payload [" + num(d.record_offset) + ", +" +
                                               num(payload_length) + ") lies outside its " + num(d.record_length) +
                                               "-byte record");
  if (d.buffer_offset > buffer_length || d.record_length > buffer_length - d.buffer_offset)
    return fail(DecodeFault::inconsistent, "write-record datagram out of bounds: record [" + num(d.buffer_offset) +
                                               ", +" + num(d.record_length) + ") does not fit the advertised " +
                                               num(buffer_length) + "-byte buffer");
  return d;
}

}  // namespace vod::proto
