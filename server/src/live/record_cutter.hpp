// SPDX-License-Identifier: LGPL-2.1-or-later
// Cuts a live MPEG-TS byte stream into records: runs of whole 188-byte packets, each ending where
// the next access unit of the main stream begins (so a keyframe always starts a record), when the
// record reaches its size limit, or when the source says no more input is waiting (flush). Bytes
// that are not on a packet boundary are dropped and counted until the sync byte is found again.
//
// A keyframe record is made decodable on its own, since late joiners start at one: copies of the
// newest PAT and PMT go in front of it (a demuxer knows nothing before them). To keep those PIDs'
// continuity counters continuous, the cutter numbers every PAT and PMT packet itself.
//
// Pure logic: no I/O, no clock. The sink sees each record once, in order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "vod/media/ts_scanner.hpp"

namespace vod::server::live {

struct Record {
  std::span<const std::uint8_t> bytes;   // whole TS packets, valid during the sink call
  bool unit_start = false;               // an access unit of the main stream starts at the first byte
  bool random_access = false;            // ... and it is a keyframe
  bool discontinuity = false;            // the source restarted or looped before this record
  std::optional<std::uint64_t> pts_90k;  // of the access unit that starts the record, when one does
};

struct CutterStats {
  std::uint64_t packets = 0;
  std::uint64_t records = 0;
  std::uint64_t dropped_bytes = 0;  // not on a packet boundary (lost sync, or not TS at all)
  std::uint64_t resyncs = 0;        // times sync was lost after it had been found
};

class RecordCutter {
 public:
  using Sink = std::function<void(const Record&)>;

  // max_record_bytes is rounded down to whole packets (at least one).
  RecordCutter(std::size_t max_record_bytes, Sink sink);

  // Any chunking of the input: partial packets are kept until the rest arrives.
  void feed(std::span<const std::uint8_t> bytes);
  // Emits the pending record now (the source has no more input at hand).
  void flush();
  // The next record starts after a discontinuity (a file loop, a source restart); the scanner
  // forgets the program, since a restarted encoder may use other PIDs.
  void mark_discontinuity();

  const CutterStats& stats() const noexcept { return stats_; }
  const media::TsScanner& scanner() const noexcept { return scanner_; }
  // Sees every packet the cutter takes, as the source sent it (not the cutter's PAT and PMT copies
  // or counters), with whether it is a table (PSI or SI: a PID below 0x20, or the PMT's) and
  // whether it starts an access unit of the main stream, and a keyframe's: what a recording of the
  // source is cut by (live/recorder.hpp).
  struct PacketNote {
    bool table = false, unit_start = false, keyframe = false;
  };
  using PacketTap = std::function<void(std::span<const std::uint8_t> packet, const PacketNote& note)>;
  void set_packet_tap(PacketTap tap) { packet_tap_ = std::move(tap); }
  // The last PCR seen on the program's PCR PID (27 MHz), for pacing a replay.
  std::optional<std::uint64_t> last_pcr() const noexcept { return last_pcr_; }

 private:
  void take_packet(std::span<const std::uint8_t> packet);
  void append(std::span<const std::uint8_t> packet, bool psi);

  std::size_t max_bytes_;
  Sink sink_;
  PacketTap packet_tap_;
  media::TsScanner scanner_;
  std::vector<std::uint8_t> partial_;  // < 188 bytes of the next packet, or bytes being resynced
  std::vector<std::uint8_t> pending_;  // the record being built
  Record meta_;                        // flags of the pending record
  bool discontinuity_next_ = false;
  std::vector<std::uint8_t> pat_, pmt_;  // the newest single-packet PAT and PMT, to repeat before keyframes
  std::uint8_t pat_cc_ = 0, pmt_cc_ = 0;
  bool in_sync_ = false;  // a sync byte is trusted only when the next packet's confirms it
  std::optional<std::uint64_t> last_pcr_;
  CutterStats stats_;
};

}  // namespace vod::server::live
