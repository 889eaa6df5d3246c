// SPDX-License-Identifier: LGPL-2.1-or-later
// The receiving side of UDP Write-Record: datagrams are placed into the advertised buffer at the
// offset they name, and the receiver reports, per record, which byte ranges arrived (the message
// view: completion records) and, over the whole buffer, which bytes hold valid data (the memory
// view: the validity map).
//
// Before it writes a byte it checks that a datagram comes from the expected source, carries the
// session and the epoch of a record it expects, lies inside that record and the buffer (computed
// without overflow), was not cut short, and passes its CRC32C; anything else is dropped and counted,
// never written. Datagrams arrive in batches (recvmmsg) into scratch slots and are copied into place
// only once every check passed, so a corrupt or hostile datagram cannot touch the buffer. Only the
// bytes a record still misses are written: a duplicate never overwrites what arrived.
//
// A record that gets no datagram for `gap_timeout` after its last one (or by its first deadline)
// is reported incomplete, with what arrived: the caller asks again for the holes (VoD) or reports
// them (live). Datagrams of a record the caller forgot are late, and dropped.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <vector>

#include "vod/client/range_set.hpp"
#include "vod/protocol/write_record.hpp"

namespace vod::client {

struct CompletionRecord {
  std::uint64_t record_seq = 0;
  std::uint64_t buffer_offset = 0;
  std::uint64_t length = 0;
  std::vector<ByteRange> received;  // in buffer offsets
  bool complete = false;            // false: it timed out with holes
};

struct ReceiverStats {
  std::uint64_t datagrams = 0, placed_bytes = 0, duplicate_bytes = 0, errors = 0;
  std::uint64_t dropped_source = 0, dropped_session = 0, dropped_epoch = 0, dropped_bounds = 0, dropped_checksum = 0, dropped_truncated = 0,
                dropped_garbage = 0, dropped_late = 0;
  std::uint64_t dropped() const noexcept {
    return dropped_source + dropped_session + dropped_epoch + dropped_bounds + dropped_checksum + dropped_truncated + dropped_garbage +
           dropped_late;
  }
};

class WriteRecordReceiver {
 public:
  using Clock = std::chrono::steady_clock;

  // `fd`: a UDP socket (not owned). `source`: the only address datagrams are taken from.
  // `max_datagram`: the largest datagram expected (header and payload); larger ones are truncated
  // and dropped.
  WriteRecordReceiver(int fd, std::span<std::uint8_t> buffer, std::uint32_t session_id, const sockaddr_storage& source,
                      std::size_t max_datagram, std::chrono::milliseconds gap_timeout);

  // Datagrams of `record_seq` with `epoch` go into [buffer_offset, buffer_offset + length) from
  // now on (whatever was valid there is no longer). `deadline`: when to give up on the first.
  void expect(std::uint64_t record_seq, std::uint32_t epoch, std::uint64_t buffer_offset, std::uint64_t length, Clock::time_point deadline);
  void forget(std::uint64_t record_seq) noexcept;
  // Waits for the holes of a record again (after asking for them) until `deadline`.
  void rearm(std::uint64_t record_seq, Clock::time_point deadline);
  std::vector<ByteRange> missing(std::uint64_t record_seq) const;

  // Takes every datagram queued on the socket. Completed records go to `done`; error datagrams of
  // this session to `errors`.
  void receive(std::vector<CompletionRecord>& done, std::vector<proto::WriteRecordError>& errors);
  // Records whose deadline passed go to `done`, incomplete; they stay expected (rearm or forget).
  void expire(Clock::time_point now, std::vector<CompletionRecord>& done);
  std::optional<Clock::time_point> next_deadline() const;

  const RangeSet& validity() const noexcept { return validity_; }
  const ReceiverStats& stats() const noexcept { return stats_; }
  std::size_t expected() const noexcept { return records_.size(); }

 private:
  struct Record {
    std::uint32_t epoch = 0;
    std::uint64_t begin = 0, end = 0;  // in the buffer
    RangeSet received;
    Clock::time_point deadline;
    bool reported = false;  // timed out and reported; waits for rearm()
  };
  void take(const std::uint8_t* data, std::size_t size, bool truncated, const sockaddr_storage& from, socklen_t from_len,
            std::vector<CompletionRecord>& done, std::vector<proto::WriteRecordError>& errors);
  CompletionRecord report(std::uint64_t seq, const Record& r, bool complete) const;

  int fd_;
  std::span<std::uint8_t> buffer_;
  std::uint32_t session_;
  sockaddr_storage source_;
  std::size_t max_datagram_;
  std::chrono::milliseconds gap_;
  std::map<std::uint64_t, Record> records_;
  RangeSet validity_;
  std::vector<std::uint8_t> scratch_;
  ReceiverStats stats_;
};

}  // namespace vod::client
