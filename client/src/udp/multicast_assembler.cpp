// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/multicast_assembler.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace vod::client {
namespace {

constexpr std::uint64_t kTsPacket = 188;
constexpr std::size_t kMaxRecords = 4096;          // records held at once, at most
constexpr std::uint64_t kLateRunForRestart = 256;  // consecutive stale datagrams that mean the sender restarted

}  // namespace

std::string AssemblerStats::summary() const {
  return std::to_string(datagrams) + " datagrams, " + std::to_string(delivered_bytes) +
         " bytes delivered; records: " + std::to_string(records_complete) + " complete, " + std::to_string(records_with_holes) +
         " with holes (" + std::to_string(hole_bytes) + " bytes missing), " + std::to_string(records_lost) + " lost (" +
         std::to_string(lost_bytes) + " bytes), " + std::to_string(records_before_join) + " before joining at a keyframe; " +
         std::to_string(discontinuities) + " discontinuities reported; dropped: " + std::to_string(dropped_channel) + " other channel, " +
         std::to_string(dropped_late) + " late, " + std::to_string(dropped_ahead) + " too far ahead, " +
         std::to_string(dropped_inconsistent) + " inconsistent; " + std::to_string(duplicate_bytes) + " duplicate bytes; " +
         std::to_string(restarts) + " sender restarts";
}

MulticastAssembler::MulticastAssembler(std::uint32_t channel_id, std::size_t ring_bytes, std::chrono::milliseconds hole_timeout)
    : channel_id_(channel_id), ring_(ring_bytes), hole_timeout_(hole_timeout) {
  if (ring_bytes < 64 * 1024) throw std::invalid_argument("a live multicast ring needs at least 64 KiB");
}

bool MulticastAssembler::fits(std::uint64_t seq, const Record& r) const {
  // Offsets grow with record numbers: the new record lies between its neighbours, never over them.
  auto next = records_.upper_bound(seq);
  if (next != records_.end() && r.offset + r.length > next->second.offset) return false;
  if (next != records_.begin()) {
    auto prev = std::prev(next);
    if (prev->first != seq && prev->second.offset + prev->second.length > r.offset) return false;
  }
  if (expected_offset_ && r.offset < *expected_offset_) return false;
  return true;
}

void MulticastAssembler::place(const proto::WriteRecordData& d, Clock::time_point now) {
  ++stats_.datagrams;
  if (d.session_id != channel_id_) {
    ++stats_.dropped_channel;
    return;
  }
  if (!(d.flags & proto::kRecordStreamOffset) || d.record_length > ring_.size()) {
    ++stats_.dropped_inconsistent;
    return;
  }
  const std::uint64_t seq = d.record_seq;
  if (started_ && seq < next_seq_) {
    ++stats_.dropped_late;
    // A sender that restarted numbers its records from 0 again: after a run of nothing but stale
    // datagrams, start over (at its next keyframe).
    if (++late_run_ >= kLateRunForRestart) {
      ++stats_.restarts;
      records_.clear();
      current_.reset();
      started_ = false;
      expected_offset_.reset();
      stream_id_.reset();
      pending_discontinuity_ = true;
      late_run_ = 0;
    }
    return;
  }
  late_run_ = 0;
  if (started_ && seq - next_seq_ >= kSequenceWindow) {
    ++stats_.dropped_ahead;
    return;
  }
  const auto live_flags = static_cast<std::uint16_t>(d.flags & proto::kRecordLiveFlags);
  auto it = records_.find(seq);
  if (it == records_.end()) {
    Record r;
    r.offset = d.buffer_offset;
    r.length = d.record_length;
    r.flags = live_flags;
    r.stream_id = d.epoch;
    r.first_seen = now;
    if (!fits(seq, r)) {
      ++stats_.dropped_inconsistent;
      return;
    }
    if (started_) {
      // Room: the ring holds everything from the oldest byte not yet delivered.
      const std::uint64_t base = current_ ? current_->record.offset : *expected_offset_;
      if (r.offset + r.length - base > ring_.size() || records_.size() >= kMaxRecords) {
        ++stats_.dropped_ahead;
        return;
      }
    } else {
      // Not started: the oldest records make room (a viewer joins at the newest keyframe it can).
      while (!records_.empty() && records_.begin()->first < seq &&
             (r.offset + r.length - records_.begin()->second.offset > ring_.size() || records_.size() >= kMaxRecords)) {
        records_.erase(records_.begin());
        ++stats_.records_before_join;
      }
      const std::uint64_t low = records_.empty() ? r.offset : std::min(r.offset, records_.begin()->second.offset);
      const std::uint64_t high =
          records_.empty()
              ? r.offset + r.length
              : std::max(r.offset + r.length, std::prev(records_.end())->second.offset + std::prev(records_.end())->second.length);
      if (high - low > ring_.size() || records_.size() >= kMaxRecords) {
        ++stats_.dropped_ahead;
        return;
      }
    }
    it = records_.emplace(seq, std::move(r)).first;
  } else {
    const Record& r = it->second;
    if (r.offset != d.buffer_offset || r.length != d.record_length || r.stream_id != d.epoch || r.flags != live_flags) {
      ++stats_.dropped_inconsistent;
      return;
    }
  }
  Record& r = it->second;
  const std::uint64_t begin = d.record_offset, end = d.record_offset + d.payload.size();  // within the record (decoder checked)
  for (const ByteRange& hole : r.got.missing(begin, end)) {
    // Copy into the ring at the stream offset, in two parts where it wraps.
    std::uint64_t done = hole.begin;
    while (done < hole.end) {
      const std::size_t at = static_cast<std::size_t>((r.offset + done) % ring_.size());
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(hole.end - done, ring_.size() - at));
      std::memcpy(ring_.data() + at, d.payload.data() + (done - begin), n);
      done += n;
    }
    stats_.placed_bytes += hole.size();
  }
  stats_.duplicate_bytes += d.payload.size() - r.got.add(begin, end);
}

void MulticastAssembler::start_delivery(std::uint64_t seq, Record r) {
  Delivery d;
  d.seq = seq;
  if (r.length > 0) {
    if (r.complete()) {
      d.pieces.push_back({0, r.length});
      ++stats_.records_complete;
    } else {
      // Whole TS packets only: a packet cut by a hole is dropped with it.
      std::uint64_t kept = 0;
      for (const ByteRange& g : r.got.ranges()) {
        const std::uint64_t b = (g.begin + kTsPacket - 1) / kTsPacket * kTsPacket;
        const std::uint64_t e = g.end == r.length ? r.length : g.end / kTsPacket * kTsPacket;
        if (e > b) {
          d.pieces.push_back({b, e});
          kept += e - b;
        }
      }
      stats_.hole_bytes += r.length - kept;
      ++stats_.records_with_holes;
    }
  } else {
    ++stats_.records_complete;
  }
  if ((r.flags & proto::kRecordDiscontinuity) || (stream_id_ && *stream_id_ != r.stream_id) ||
      (expected_offset_ && *expected_offset_ != r.offset))
    pending_discontinuity_ = true;
  d.hole_before = !d.pieces.empty() && d.pieces.front().begin > 0;
  if (r.length > 0 && (d.pieces.empty() || d.pieces.back().end < r.length)) d.hole_after = true;
  stream_id_ = r.stream_id;
  expected_offset_ = r.offset + r.length;
  d.record = std::move(r);
  current_ = std::move(d);
}

bool MulticastAssembler::select(Clock::time_point now) {
  if (current_) return true;
  if (!started_) {
    for (auto it = records_.begin(); it != records_.end(); ++it) {
      const Record& r = it->second;
      if (!(r.flags & proto::kRecordKeyframe) || !(r.complete() || now - r.first_seen >= hole_timeout_)) continue;
      stats_.records_before_join += static_cast<std::uint64_t>(std::distance(records_.begin(), it));
      records_.erase(records_.begin(), it);
      started_ = true;
      next_seq_ = it->first;
      expected_offset_ = r.offset;
      stream_id_ = r.stream_id;
      break;
    }
    if (!started_) return false;
  }
  for (;;) {
    auto it = records_.find(next_seq_);
    if (it != records_.end()) {
      if (!it->second.complete() && now - it->second.first_seen < hole_timeout_) return false;
      Record r = std::move(it->second);
      records_.erase(it);
      const std::uint64_t seq = next_seq_++;
      start_delivery(seq, std::move(r));
      return true;
    }
    // Never seen: once a later record has waited the hole timeout, the ones before it are lost.
    auto later = records_.upper_bound(next_seq_);
    if (later == records_.end() || now - later->second.first_seen < hole_timeout_) return false;
    stats_.records_lost += later->first - next_seq_;
    if (expected_offset_ && later->second.offset >= *expected_offset_) stats_.lost_bytes += later->second.offset - *expected_offset_;
    pending_discontinuity_ = true;
    next_seq_ = later->first;
    expected_offset_ = later->second.offset;
  }
}

void MulticastAssembler::copy_out(std::uint64_t stream_offset, std::span<std::uint8_t> out) const {
  std::size_t done = 0;
  while (done < out.size()) {
    const std::size_t at = static_cast<std::size_t>((stream_offset + done) % ring_.size());
    const std::size_t n = std::min(out.size() - done, ring_.size() - at);
    std::memcpy(out.data() + done, ring_.data() + at, n);
    done += n;
  }
}

AssembledChunk MulticastAssembler::read(std::span<std::uint8_t> out, Clock::time_point now) {
  AssembledChunk c;
  if (finished_) {
    c.finished = true;
    return c;
  }
  for (;;) {
    if (!select(now)) return c;
    Delivery& d = *current_;
    if (finishing_ && d.piece == 0 && d.at == 0 && (d.record.flags & proto::kRecordUnitStart)) {
      finished_ = true;
      current_.reset();
      c.finished = true;
      return c;
    }
    if (d.piece == d.pieces.size()) {
      // Nothing (left) to copy: an end of stream, or a record whose holes cut every TS packet.
      const bool eos = (d.record.flags & proto::kRecordEndOfStream) != 0;
      if (d.hole_after) pending_discontinuity_ = true;
      c.stream_offset = d.record.offset + d.record.length;
      current_.reset();
      if (eos) {
        c.end_of_stream = true;
        return c;
      }
      continue;
    }
    if (out.empty()) return c;
    const ByteRange& piece = d.pieces[d.piece];
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), piece.size() - d.at));
    c.stream_offset = d.record.offset + piece.begin + d.at;
    copy_out(c.stream_offset, out.first(n));
    c.bytes = n;
    c.discontinuity = pending_discontinuity_ || (d.at == 0 && (d.piece > 0 || d.hole_before));
    pending_discontinuity_ = false;
    d.at += n;
    if (d.at == piece.size()) {
      ++d.piece;
      d.at = 0;
    }
    if (d.piece == d.pieces.size()) {
      if (d.hole_after) pending_discontinuity_ = true;
      c.end_of_stream = (d.record.flags & proto::kRecordEndOfStream) != 0;
      current_.reset();
    }
    stats_.delivered_bytes += n;
    stats_.discontinuities += c.discontinuity;
    return c;
  }
}

std::optional<MulticastAssembler::Clock::time_point> MulticastAssembler::next_deadline() const {
  if (current_) return Clock::time_point::min();
  std::optional<Clock::time_point> next;
  const auto consider = [&](const Record& r) {
    const auto t = r.complete() ? Clock::time_point::min() : r.first_seen + hole_timeout_;
    if (!next || t < *next) next = t;
  };
  if (!started_) {
    for (const auto& [seq, r] : records_)
      if (r.flags & proto::kRecordKeyframe) consider(r);
    return next;
  }
  auto it = records_.lower_bound(next_seq_);
  if (it == records_.end()) return next;
  if (it->first == next_seq_) consider(it->second);
  else next = it->second.first_seen + hole_timeout_;
  return next;
}

}  // namespace vod::client
