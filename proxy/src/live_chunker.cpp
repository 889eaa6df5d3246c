// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_chunker.hpp"

namespace vod::proxy {

using media::kTsPacketSize;

std::vector<FanoutChunkPtr> LiveChunker::feed(std::span<const std::uint8_t> bytes, bool discontinuity) {
  std::vector<FanoutChunkPtr> out;
  if (discontinuity) {
    // The whole packets held so far are still good bytes of the old stream; a partial one is not.
    cut(scanned_, out);
    stats_.dropped_partial += pending_.size();
    pending_.clear();
    scanned_ = published_;
    joins_.clear();
    stream_starts_.clear();
    units_.clear();
    psi_at_.reset();
    scanner_.reset();
    stream_start_ = true;
  }
  pending_.insert(pending_.end(), bytes.begin(), bytes.end());
  scan_whole_packets();
  std::uint64_t end = scanned_;
  // A PAT/PMT run that a keyframe may follow stays here, so that the keyframe's chunk begins with it.
  if (psi_at_ && end - *psi_at_ <= kMaxHeldBytes) end = *psi_at_;
  cut(end, out);
  return out;
}

void LiveChunker::scan_whole_packets() {
  while (scanned_ + kTsPacketSize <= published_ + pending_.size()) {
    const std::uint64_t at = scanned_;
    scanned_ += kTsPacketSize;
    if (stream_start_) {
      joins_.push_back(at);
      stream_starts_.push_back(at);
      stream_start_ = false;
    }
    const auto packet = media::parse_ts_packet(std::span<const std::uint8_t>(pending_.data() + (at - published_), kTsPacketSize));
    if (!packet) {
      ++stats_.unsynced_packets;
      continue;
    }
    const media::TsPacketMeaning meaning = scanner_.scan(*packet);
    if (packet->pid == 0 && packet->payload_unit_start && !psi_at_) psi_at_ = at;
    if (!meaning.access_unit_start) continue;
    std::uint64_t unit_at = at;
    if (meaning.random_access) {
      // Start at the PAT in front of the keyframe when it is still unpublished, else at the keyframe.
      const std::uint64_t join = psi_at_ && *psi_at_ >= published_ ? *psi_at_ : at;
      if (joins_.empty() || joins_.back() < join) joins_.push_back(join);
      ++stats_.keyframes;
      unit_at = join;
    }
    if (units_.empty() || units_.back().at < unit_at) units_.push_back({unit_at, meaning.pts_90k, meaning.random_access});
    psi_at_.reset();
  }
}

void LiveChunker::cut(std::uint64_t end, std::vector<FanoutChunkPtr>& out) {
  std::uint64_t start = published_;
  while (start < end) {
    bool join = false;
    while (!joins_.empty() && joins_.front() <= start) {
      join = join || joins_.front() == start;
      joins_.pop_front();
    }
    const std::uint64_t stop = !joins_.empty() && joins_.front() < end ? joins_.front() : end;
    auto chunk = std::make_shared<FanoutChunk>();
    chunk->offset = start;
    chunk->join_point = join;
    while (!stream_starts_.empty() && stream_starts_.front() <= start) {
      chunk->stream_start = chunk->stream_start || stream_starts_.front() == start;
      stream_starts_.pop_front();
    }
    while (!units_.empty() && units_.front().at < stop) {
      const Unit u = units_.front();
      units_.pop_front();
      if (u.at >= start) chunk->units.push_back({static_cast<std::size_t>(u.at - start), u.pts_90k, u.keyframe});
    }
    const auto first = pending_.begin() + static_cast<std::ptrdiff_t>(start - published_);
    chunk->bytes.assign(first, first + static_cast<std::ptrdiff_t>(stop - start));
    out.push_back(std::move(chunk));
    start = stop;
  }
  if (end <= published_) return;
  pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(end - published_));
  published_ = end;
}

}  // namespace vod::proxy
