// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/trains.hpp"

#include <algorithm>

namespace vod::server::udp {

std::uint64_t build_train(Train& t, const Endpoint& to, const TrainRecord& r, std::span<const std::uint8_t> ready, std::size_t count) {
  constexpr std::size_t kHeader = sizeof(proto::WireWriteRecordDataHeader);
  t.segments = count;
  t.to = to;
  t.zero_copy = false;
  std::uint64_t at = r.sent;
  for (std::size_t k = 0; k < count; ++k) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(r.payload, r.sent + ready.size() - at));
    proto::WriteRecordData d;
    d.session_id = r.session_id;
    d.epoch = r.epoch;
    d.record_seq = r.record_seq;
    d.record_length = r.record_length;
    d.record_offset = at;
    d.buffer_offset = r.buffer_offset;
    d.flags = at + n == r.record_length ? proto::kRecordLastDatagram : 0;
    d.payload = ready.subspan(static_cast<std::size_t>(at - r.sent), n);
    t.headers[k] = proto::data_header(d);
    t.iov[2 * k] = {&t.headers[k], kHeader};
    t.iov[2 * k + 1] = {const_cast<std::uint8_t*>(d.payload.data()), n};  // sendmsg reads, never writes
    at += n;
  }
  t.bytes = static_cast<std::size_t>(at - r.sent) + count * kHeader;
  return at;
}

}  // namespace vod::server::udp
