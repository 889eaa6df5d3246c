// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/record_cutter.hpp"

#include <algorithm>
#include <utility>

namespace vod::server::live {

using media::kTsPacketSize;
using media::kTsSyncByte;

RecordCutter::RecordCutter(std::size_t max_record_bytes, Sink sink)
    : max_bytes_(std::max(kTsPacketSize, max_record_bytes / kTsPacketSize * kTsPacketSize)), sink_(std::move(sink)) {
  pending_.reserve(max_bytes_);
}

void RecordCutter::feed(std::span<const std::uint8_t> bytes) {
  partial_.insert(partial_.end(), bytes.begin(), bytes.end());
  std::size_t at = 0;
  while (partial_.size() - at >= kTsPacketSize) {
    const bool sync_here = partial_[at] == kTsSyncByte;
    // Out of sync, a sync byte counts only when the next packet's sync byte confirms it.
    const bool have_next = partial_.size() - at > kTsPacketSize;
    if (sync_here && !in_sync_ && !have_next) break;  // wait for the confirming byte
    if (!sync_here || (!in_sync_ && partial_[at + kTsPacketSize] != kTsSyncByte)) {
      if (in_sync_) {
        in_sync_ = false;
        ++stats_.resyncs;
      }
      ++stats_.dropped_bytes;
      ++at;
      continue;
    }
    in_sync_ = true;
    take_packet(std::span<const std::uint8_t>(partial_).subspan(at, kTsPacketSize));
    at += kTsPacketSize;
  }
  partial_.erase(partial_.begin(), partial_.begin() + static_cast<std::ptrdiff_t>(at));
}

void RecordCutter::take_packet(std::span<const std::uint8_t> packet) {
  media::TsPacketMeaning m;
  bool psi = false, table = false;
  // A packet with a malformed adaptation field is kept (its bytes are the stream's), but means nothing.
  if (auto p = media::parse_ts_packet(packet)) {
    const std::uint16_t pmt_before = scanner_.pmt_pid();
    m = scanner_.scan(*p);
    psi = p->pid == 0 || (p->pid == pmt_before && pmt_before != 0x1fff) || p->pid == scanner_.pmt_pid();
    if (psi && p->payload_unit_start) (p->pid == 0 ? pat_ : pmt_).assign(packet.begin(), packet.end());
    table = psi || p->pid < 0x20;
  }
  if (packet_tap_) packet_tap_(packet, {table, m.access_unit_start, m.access_unit_start && m.random_access});
  if (m.pcr_27m) last_pcr_ = m.pcr_27m;
  if (m.access_unit_start && !pending_.empty()) flush();
  // Room for this packet, and for the PAT and PMT a keyframe record starts with.
  const std::size_t head = m.access_unit_start && m.random_access ? pat_.size() + pmt_.size() : 0;
  if (pending_.size() + head + kTsPacketSize > max_bytes_) flush();
  if (pending_.empty()) {
    meta_ = {};
    meta_.unit_start = m.access_unit_start;
    meta_.random_access = m.access_unit_start && m.random_access;
    if (m.access_unit_start) meta_.pts_90k = m.pts_90k;
    meta_.discontinuity = std::exchange(discontinuity_next_, false);
    if (meta_.random_access && !pat_.empty() && !pmt_.empty()) {
      append(pat_, true);
      append(pmt_, true);
    }
  }
  append(packet, psi);
  ++stats_.packets;
}

void RecordCutter::append(std::span<const std::uint8_t> packet, bool psi) {
  const std::size_t at = pending_.size();
  pending_.insert(pending_.end(), packet.begin(), packet.end());
  if (psi && (pending_[at + 3] & 0x10)) {  // a PAT or PMT with payload: the cutter's own counter
    std::uint8_t& cc = (((pending_[at + 1] & 0x1f) << 8) | pending_[at + 2]) == 0 ? pat_cc_ : pmt_cc_;
    pending_[at + 3] = static_cast<std::uint8_t>((pending_[at + 3] & 0xf0) | (cc++ & 0x0f));
  }
}

void RecordCutter::flush() {
  if (pending_.empty()) return;
  meta_.bytes = pending_;
  sink_(meta_);
  ++stats_.records;
  pending_.clear();
}

void RecordCutter::mark_discontinuity() {
  flush();
  stats_.dropped_bytes += partial_.size();  // the rest of a packet of the old stream
  partial_.clear();
  scanner_.reset();
  pat_.clear();
  pmt_.clear();
  in_sync_ = false;
  discontinuity_next_ = true;
}

}  // namespace vod::server::live
