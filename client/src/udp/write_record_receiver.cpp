// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/write_record_receiver.hpp"

#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "vod/protocol/crc32c.hpp"

namespace vod::client {

namespace {

constexpr std::size_t kBatch = 32;

bool same_address(const sockaddr_storage& a, const sockaddr_storage& b) {
  if (a.ss_family != b.ss_family) return false;
  if (a.ss_family == AF_INET) {
    const auto& x = reinterpret_cast<const sockaddr_in&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in&>(b);
    return x.sin_port == y.sin_port && x.sin_addr.s_addr == y.sin_addr.s_addr;
  }
  if (a.ss_family == AF_INET6) {
    const auto& x = reinterpret_cast<const sockaddr_in6&>(a);
    const auto& y = reinterpret_cast<const sockaddr_in6&>(b);
    return x.sin6_port == y.sin6_port && std::memcmp(&x.sin6_addr, &y.sin6_addr, sizeof x.sin6_addr) == 0;
  }
  return false;
}

}  // namespace

WriteRecordReceiver::WriteRecordReceiver(int fd, std::span<std::uint8_t> buffer, std::uint32_t session_id, const sockaddr_storage& source,
                                         std::size_t max_datagram, std::chrono::milliseconds gap_timeout)
    : fd_(fd),
      buffer_(buffer),
      session_(session_id),
      source_(source),
      max_datagram_(std::max<std::size_t>(max_datagram, 2048)),
      gap_(gap_timeout),
      scratch_(kBatch * (max_datagram_ + 1)) {}

void WriteRecordReceiver::expect(std::uint64_t seq, std::uint32_t epoch, std::uint64_t buffer_offset, std::uint64_t length,
                                 Clock::time_point deadline) {
  Record r;
  r.epoch = epoch;
  r.begin = buffer_offset;
  r.end = buffer_offset + length;
  r.deadline = deadline;
  validity_.remove(r.begin, r.end);  // the buffer is being reused: what was there is not this record
  records_[seq] = std::move(r);
}

void WriteRecordReceiver::forget(std::uint64_t seq) noexcept { records_.erase(seq); }

void WriteRecordReceiver::rearm(std::uint64_t seq, Clock::time_point deadline) {
  auto it = records_.find(seq);
  if (it == records_.end()) return;
  it->second.deadline = deadline;
  it->second.reported = false;
}

std::vector<ByteRange> WriteRecordReceiver::missing(std::uint64_t seq) const {
  auto it = records_.find(seq);
  return it == records_.end() ? std::vector<ByteRange>{} : it->second.received.missing(it->second.begin, it->second.end);
}

CompletionRecord WriteRecordReceiver::report(std::uint64_t seq, const Record& r, bool complete) const {
  return {seq, r.begin, r.end - r.begin, r.received.within(r.begin, r.end), complete};
}

void WriteRecordReceiver::receive(std::vector<CompletionRecord>& done, std::vector<proto::WriteRecordError>& errors) {
  const std::size_t slot = max_datagram_ + 1;  // one byte more than any expected datagram: a longer one is cut
  mmsghdr msgs[kBatch];
  iovec iovs[kBatch];
  sockaddr_storage from[kBatch];
  for (int round = 0; round < 64; ++round) {  // bounded, so a flood cannot hold the caller for ever
    for (std::size_t i = 0; i < kBatch; ++i) {
      iovs[i] = {scratch_.data() + i * slot, slot};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iovs[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof from[i];
    }
    const int n = recvmmsg(fd_, msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) return;
    for (int i = 0; i < n; ++i) {
      const bool truncated = (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) || msgs[i].msg_len > max_datagram_;
      take(scratch_.data() + static_cast<std::size_t>(i) * slot, std::min<std::size_t>(msgs[i].msg_len, slot), truncated, from[i],
           msgs[i].msg_hdr.msg_namelen, done, errors);
    }
    if (static_cast<std::size_t>(n) < kBatch) return;
  }
}

void WriteRecordReceiver::take(const std::uint8_t* data, std::size_t size, bool truncated, const sockaddr_storage& from, socklen_t,
                               std::vector<CompletionRecord>& done, std::vector<proto::WriteRecordError>& errors) {
  ++stats_.datagrams;
  if (!same_address(from, source_)) {
    ++stats_.dropped_source;
    return;
  }
  if (truncated) {
    ++stats_.dropped_truncated;
    return;
  }
  const proto::Bytes datagram(data, size);
  if (size >= sizeof(proto::WireHeader) && data[5] == static_cast<std::uint8_t>(proto::MessageType::write_record_error)) {
    auto e = proto::decode_write_record_error(datagram);
    if (!e) {
      ++stats_.dropped_garbage;
    } else if (e->session_id != session_) {
      ++stats_.dropped_session;
    } else {
      ++stats_.errors;
      errors.push_back(std::move(*e));
    }
    return;
  }
  auto d = proto::decode_write_record_data_header(datagram, buffer_.size(), size);
  if (!d) {
    if (d.error().message.find("arrived") != std::string::npos) ++stats_.dropped_truncated;
    else if (d.error().fault == proto::DecodeFault::inconsistent) ++stats_.dropped_bounds;
    else ++stats_.dropped_garbage;
    return;
  }
  if (d->flags & proto::kRecordStreamOffset) {
    ++stats_.dropped_garbage;  // a live multicast datagram: not an answer to a request
    return;
  }
  if (d->session_id != session_) {
    ++stats_.dropped_session;
    return;
  }
  auto it = records_.find(d->record_seq);
  if (it == records_.end()) {
    ++stats_.dropped_late;  // a record already complete, forgotten (a seek), or never asked for
    return;
  }
  Record& r = it->second;
  if (d->epoch != r.epoch) {
    ++stats_.dropped_epoch;
    return;
  }
  const std::size_t payload = size - sizeof(proto::WireWriteRecordDataHeader);
  // Within the buffer already (the decoder checked, without overflow); now within this record.
  const std::uint64_t at = d->buffer_offset + d->record_offset;
  if (at < r.begin || at > r.end || payload > r.end - at) {
    ++stats_.dropped_bounds;
    return;
  }
  // The checksum covers the header (with its CRC field zero) and the payload.
  proto::WireWriteRecordDataHeader head = proto::load_wire<proto::WireWriteRecordDataHeader>(data);
  const std::uint32_t want = head.crc32c.get();
  head.crc32c = 0u;
  std::uint8_t zeroed[sizeof head];
  proto::store_wire(zeroed, head);
  if (proto::crc32c(proto::crc32c(0, zeroed), datagram.subspan(sizeof head)) != want) {
    ++stats_.dropped_checksum;
    return;
  }
  // Every check passed: copy what this record still misses, and nothing else.
  const std::uint8_t* src = data + sizeof head;
  for (const ByteRange& hole : r.received.missing(at, at + payload)) {
    std::memcpy(buffer_.data() + hole.begin, src + (hole.begin - at), hole.size());
    stats_.placed_bytes += hole.size();
    validity_.add(hole.begin, hole.end);
  }
  stats_.duplicate_bytes += payload - (r.received.add(at, at + payload));
  r.deadline = std::max(r.deadline, Clock::now() + gap_);  // the inter-datagram timeout
  r.reported = false;
  if (r.received.contains(r.begin, r.end)) {
    done.push_back(report(it->first, r, true));
    records_.erase(it);
  }
}

void WriteRecordReceiver::expire(Clock::time_point now, std::vector<CompletionRecord>& done) {
  for (auto& [seq, r] : records_) {
    if (r.reported || r.deadline > now) continue;
    r.reported = true;
    done.push_back(report(seq, r, false));
  }
}

std::optional<WriteRecordReceiver::Clock::time_point> WriteRecordReceiver::next_deadline() const {
  std::optional<Clock::time_point> next;
  for (const auto& [seq, r] : records_)
    if (!r.reported && (!next || r.deadline < *next)) next = r.deadline;
  return next;
}

}  // namespace vod::client
