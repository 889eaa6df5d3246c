// SPDX-License-Identifier: LGPL-2.1-or-later
// MPEG-TS at the packet level, for live sources: which packet starts a video access unit, whether
// that is a random access point (keyframe), its PTS, and the PCR that paces a file replay.
//
// Written by hand rather than through libavformat's mpegts demuxer: a live server must keep every
// byte of the input in place (records are cut between 188-byte packets, never re-muxed), must not
// buffer or probe ahead (latency), and needs the byte position of each random access point, which
// the demuxer reports only approximately. Parsing the fixed packet header, the adaptation field,
// PAT/PMT and the PES header is a few hundred lines, and every field is bounds-checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace vod::media {

inline constexpr std::size_t kTsPacketSize = 188;
inline constexpr std::uint8_t kTsSyncByte = 0x47;

// The fixed header and adaptation field of one packet.
struct TsPacket {
  std::uint16_t pid = 0;
  bool payload_unit_start = false;
  bool transport_error = false;
  bool random_access = false;  // adaptation field random_access_indicator
  bool discontinuity = false;  // adaptation field discontinuity_indicator
  std::uint8_t continuity_counter = 0;
  std::optional<std::uint64_t> pcr;       // 27 MHz
  std::span<const std::uint8_t> payload;  // empty when the packet carries none
};

// Parses one 188-byte packet; nullopt when it does not start with the sync byte or its adaptation
// field overruns the packet.
std::optional<TsPacket> parse_ts_packet(std::span<const std::uint8_t> packet);

// The PTS (90 kHz) of a PES header at the start of a payload, when it has one.
std::optional<std::uint64_t> pes_pts(std::span<const std::uint8_t> payload);

enum class VideoCodec : std::uint8_t { none, mpeg2, h264, hevc, other };

// What one packet means for a live stream.
struct TsPacketMeaning {
  bool access_unit_start = false;  // a PES of the main stream starts here (video, else the first audio)
  bool random_access = false;      // ... and decoding can start at it (a keyframe)
  std::optional<std::uint64_t> pts_90k;
  std::optional<std::uint64_t> pcr_27m;  // from the program's PCR PID
  bool discontinuity = false;
};

// Follows PAT and PMT to find the program's video stream (or, without one, its first audio stream)
// and its PCR PID, and tells for each packet whether it starts an access unit and a keyframe.
// Keyframes: the adaptation field's random_access_indicator, or, for encoders that do not set it,
// an IDR/SPS (H.264), IRAP/parameter-set NAL (HEVC) or sequence header (MPEG-2) in the first
// packet of the PES. Without a video stream every audio PES start is a random access point.
class TsScanner {
 public:
  TsPacketMeaning scan(const TsPacket& p);
  void reset() noexcept { *this = TsScanner{}; }

  std::uint16_t main_pid() const noexcept { return main_pid_; }
  VideoCodec video_codec() const noexcept { return codec_; }
  std::uint16_t pcr_pid() const noexcept { return pcr_pid_; }
  std::uint16_t pmt_pid() const noexcept { return pmt_pid_; }
  bool have_program() const noexcept { return main_pid_ != kNoPid; }

 private:
  static constexpr std::uint16_t kNoPid = 0x1fff;
  void parse_pat(std::span<const std::uint8_t> payload);
  void parse_pmt(std::span<const std::uint8_t> payload);
  bool keyframe_in(std::span<const std::uint8_t> pes) const;

  std::uint16_t pmt_pid_ = kNoPid;
  std::uint16_t main_pid_ = kNoPid;
  std::uint16_t pcr_pid_ = kNoPid;
  VideoCodec codec_ = VideoCodec::none;
};

}  // namespace vod::media
