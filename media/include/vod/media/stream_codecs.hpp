// SPDX-License-Identifier: LGPL-2.1-or-later
// What an HLS multivariant playlist's CODECS attribute needs and the catalog does not carry: H.264's
// profile, constraint flags and level (from its SPS) and AAC's audio object type, read once from a
// movie's codec headers with libavformat (over a ByteSource, confined like every open of movie bytes:
// demuxer.hpp). Only the headers and the first packets are read, never the whole movie.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

namespace vod::media {

struct AvcParameters {
  unsigned profile_idc = 0, constraint_flags = 0, level_idc = 0;
  bool operator==(const AvcParameters&) const = default;
};

struct StreamCodecs {
  std::optional<AvcParameters> avc;         // set for an H.264 video stream whose SPS was found
  std::optional<unsigned> aac_object_type;  // set for an AAC audio stream (2: LC, 5: HE, 29: HE v2)
  std::string video_codec, audio_codec;     // libavcodec's names, "" without the stream
  std::int64_t start_time_us = 0;           // the container's first timestamp (the movie's time 0)
  std::string note;                         // what could not be learned, and why
};

// The SPS fields from H.264 codec extradata: an avcC record (ISO/IEC 14496-15) or Annex B NAL units
// with start codes. nullopt when neither holds an SPS. Hostile bytes only shorten the answer.
std::optional<AvcParameters> avc_parameters(std::span<const std::uint8_t> extradata);

// Reads the movie's codec headers (`read_at` as in thumbnail.hpp) within `time_limit`. Never throws
// for bad content: what could not be learned is left unset, and `note` says why.
StreamCodecs stream_codecs(std::uint64_t size, const std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)>& read_at,
                           std::chrono::milliseconds time_limit = std::chrono::milliseconds(5000));

}  // namespace vod::media
