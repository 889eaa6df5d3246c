// SPDX-License-Identifier: LGPL-2.1-or-later
// Cuts the bytes a live channel's session delivers into the chunks that the proxy's viewers of the
// channel share (LiveBacklog). No I/O: bytes in, chunks out, unit-tested on hand-built packets.
//
// Every chunk is whole 188-byte TS packets. A chunk is a *join point* when a viewer may start at it
// and decode at once: it begins at a keyframe (the TsScanner's random access point of the main
// stream), or at the PAT just before one (vod-server puts copies of PAT and PMT in front of every
// keyframe record, so the player learns the program first), or where the session's stream begins
// (its first bytes and every discontinuity start at a keyframe record). Chunks are cut before
// every join point, so a viewer that jumps lands on a TS packet boundary at a keyframe.
//
// Bytes are held back, not published, while they cannot be cut yet: the tail of a partial packet,
// and a PAT/PMT run of at most kMaxHeldBytes that may turn out to precede a keyframe.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "vod/media/ts_scanner.hpp"

namespace vod::proxy {

// Where a frame of the main stream (video, else audio) begins in a chunk: the HLS packager cuts
// parts and segments there, and times them by its PTS.
struct AccessUnitMark {
  std::size_t at = 0;  // the offset in the chunk: the frame's first packet, or the PAT/PMT run in front of a keyframe
  std::optional<std::uint64_t> pts_90k;
  bool keyframe = false;
};

struct FanoutChunk {
  std::uint64_t offset = 0;           // in the proxy's numbering of the channel's bytes (0: the first published)
  std::vector<std::uint8_t> bytes;    // whole TS packets
  bool join_point = false;            // a viewer may start here: a keyframe (or its PAT/PMT) or a stream start
  bool stream_start = false;          // a new stream begins here (the session's first bytes, a discontinuity)
  std::vector<AccessUnitMark> units;  // the frames that begin in this chunk, in order
  std::uint64_t end() const noexcept { return offset + bytes.size(); }
};
using FanoutChunkPtr = std::shared_ptr<const FanoutChunk>;

struct ChunkerStats {
  std::uint64_t keyframes = 0;         // join points found by the scanner
  std::uint64_t dropped_partial = 0;   // bytes of a partial packet dropped at a discontinuity
  std::uint64_t unsynced_packets = 0;  // 188-byte units without the sync byte (published, never a join point)
};

class LiveChunker {
 public:
  static constexpr std::size_t kMaxHeldBytes = 32 * media::kTsPacketSize;

  // The session's next bytes. `discontinuity`: they do not continue the previous ones (a new
  // stream, a skip, a reconnect), so a partial packet held from before is dropped and the scanner
  // learns the program again. Returns the chunks complete now, in order, offsets contiguous.
  std::vector<FanoutChunkPtr> feed(std::span<const std::uint8_t> bytes, bool discontinuity);

  std::uint64_t published() const noexcept { return published_; }  // the offset of the next chunk
  std::size_t held() const noexcept { return pending_.size(); }
  const ChunkerStats& stats() const noexcept { return stats_; }

 private:
  void scan_whole_packets();
  void cut(std::uint64_t end, std::vector<FanoutChunkPtr>& out);

  std::vector<std::uint8_t> pending_;  // the bytes from published_ on
  std::uint64_t published_ = 0;
  std::uint64_t scanned_ = 0;                // whole packets up to here were scanned
  std::deque<std::uint64_t> joins_;          // join points at or after published_, ascending
  std::deque<std::uint64_t> stream_starts_;  // stream starts at or after published_, ascending
  struct Unit {
    std::uint64_t at;
    std::optional<std::uint64_t> pts_90k;
    bool keyframe;
  };
  std::deque<Unit> units_;               // frame starts at or after published_, ascending
  std::optional<std::uint64_t> psi_at_;  // a PAT not yet followed by an access unit start of the main stream
  bool stream_start_ = true;             // the next byte scanned begins a stream
  media::TsScanner scanner_;
  ChunkerStats stats_;
};

}  // namespace vod::proxy
