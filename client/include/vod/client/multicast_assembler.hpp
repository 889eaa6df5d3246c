// SPDX-License-Identifier: LGPL-2.1-or-later
// The receiving half of a live channel over UDP multicast (vod-server --live-multicast), without
// sockets: decoded Write-Record datagrams in stream-offset mode go in, the stream comes out in
// order, with every hole reported and skipped. docs/write-record.md, "Live over multicast".
//
// Each datagram's payload is placed in a ring at (stream offset mod ring size), straight from the
// decoded datagram, after checks that keep a hostile or stale datagram from overwriting anything
// not yet delivered: the channel and sequence window, offsets that grow with the record numbers,
// a record that agrees with what its earlier datagrams said. Records are delivered in record-number
// order: a complete record at once; an incomplete one after the hole timeout, as the whole TS
// packets it has, each piece after a hole marked as a discontinuity; a record never seen at all is
// counted lost once a later one has waited the hole timeout. A viewer starts at a keyframe record.
//
// Live has no repairs: a hole's moment has passed, and a repair would cost every receiver of the
// group. So holes are reported (the counts here; DISCONT on rdmasrc's buffers), never silent.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vod/client/range_set.hpp"
#include "vod/protocol/write_record.hpp"

namespace vod::client {

struct AssemblerStats {
  std::uint64_t datagrams = 0, placed_bytes = 0, duplicate_bytes = 0;
  std::uint64_t dropped_channel = 0;       // another channel of the group
  std::uint64_t dropped_late = 0;          // a record already delivered or given up
  std::uint64_t dropped_ahead = 0;         // beyond the ring's room or the sequence window
  std::uint64_t dropped_inconsistent = 0;  // contradicts its record's other datagrams or its neighbours
  std::uint64_t records_complete = 0, records_with_holes = 0, records_lost = 0, records_before_join = 0;
  std::uint64_t hole_bytes = 0;  // missing from records delivered with holes (rounded to whole TS packets)
  std::uint64_t lost_bytes = 0;  // of records never seen (from the stream offsets around them)
  std::uint64_t delivered_bytes = 0, discontinuities = 0;
  std::uint64_t restarts = 0;  // the sender's record numbers started over (it restarted): joined again

  std::string summary() const;
};

struct AssembledChunk {
  std::size_t bytes = 0;
  std::uint64_t stream_offset = 0;
  bool discontinuity = false;  // bytes before these are missing, or the source restarted: reset decoders
  bool end_of_stream = false;  // the source stopped after these bytes (it may come back)
  bool finished = false;       // after finish(): delivered up to an access-unit start
};

class MulticastAssembler {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::uint64_t kSequenceWindow = 1u << 16;  // records ahead of the next one to deliver

  // ring_bytes: at least 4 × the largest record the server sends (64 KiB by default).
  MulticastAssembler(std::uint32_t channel_id, std::size_t ring_bytes, std::chrono::milliseconds hole_timeout);

  // A datagram the decoder accepted (CRC, bounds against ring_bytes) from the expected source.
  void place(const proto::WriteRecordData& d, Clock::time_point now);

  // Copies the next piece of the stream that is ready, at most out.size() bytes. A chunk with 0
  // bytes and no flag: nothing is ready yet.
  AssembledChunk read(std::span<std::uint8_t> out, Clock::time_point now);

  // Ends the stream at the next record that starts an access unit (a recording ends on a frame).
  void finish() noexcept { finishing_ = true; }

  // When read() may have something new without another datagram (a hole timeout).
  std::optional<Clock::time_point> next_deadline() const;
  const AssemblerStats& stats() const noexcept { return stats_; }
  std::size_t ring_bytes() const noexcept { return ring_.size(); }

 private:
  struct Record {
    std::uint64_t offset = 0, length = 0;
    std::uint16_t flags = 0;
    std::uint32_t stream_id = 0;
    RangeSet got;  // record-relative
    Clock::time_point first_seen;
    bool complete() const { return got.bytes() == length; }
  };
  struct Delivery {
    std::uint64_t seq = 0;
    Record record;
    std::vector<ByteRange> pieces;  // record-relative, whole TS packets
    std::size_t piece = 0;
    std::uint64_t at = 0;      // within the current piece
    bool hole_before = false;  // before the first piece
    bool hole_after = false;   // after the last piece
  };

  bool select(Clock::time_point now);
  bool fits(std::uint64_t seq, const Record& r) const;
  void start_delivery(std::uint64_t seq, Record r);
  void copy_out(std::uint64_t stream_offset, std::span<std::uint8_t> out) const;

  std::uint32_t channel_id_;
  std::vector<std::uint8_t> ring_;
  std::chrono::milliseconds hole_timeout_;
  std::map<std::uint64_t, Record> records_;  // not yet delivered, by record number
  bool started_ = false;
  bool finishing_ = false, finished_ = false;
  std::uint64_t next_seq_ = 0;
  std::optional<std::uint64_t> expected_offset_;  // where the next record should start
  std::optional<std::uint32_t> stream_id_;
  std::optional<Delivery> current_;
  bool pending_discontinuity_ = false;
  std::uint64_t late_run_ = 0;
  AssemblerStats stats_;
};

}  // namespace vod::client
