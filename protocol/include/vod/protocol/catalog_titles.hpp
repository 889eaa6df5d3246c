// SPDX-License-Identifier: LGPL-2.1-or-later
// Titles (version 4): a folder whose movies are renditions of one title, with keyframes at the same
// times, made for adaptive bitrate; its audio tracks (streams inside the renditions) and subtitles
// (sidecar files, or text streams inside them). The server lists them in a titles area at the end
// of the catalog region, so a client reads them with the catalog, one-sided. docs/protocol.md,
// "Titles".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "vod/protocol/byte_order.hpp"
#include "vod/protocol/decode_result.hpp"
#include "vod/protocol/message_header.hpp"

namespace vod::proto {

inline constexpr std::size_t kTitleLabelMax = 31;   // "1080p", "720p (HDR)": printable ASCII
inline constexpr std::size_t kLanguageTagMax = 15;  // a BCP 47 tag: letters, digits, '-'
inline constexpr std::size_t kTrackCodecMax = 15;   // libavcodec's name: "aac", "subrip", "webvtt"
inline constexpr std::size_t kTrackNameMax = 47;    // the stream's own title, UTF-8, may be empty
inline constexpr std::size_t kTitleRenditionsMax = 32;
inline constexpr std::size_t kTitleTracksMax = 64;
inline constexpr std::uint32_t kAllRenditions = 0xffffffffu;  // a track of every rendition
inline constexpr std::uint16_t kWholeFile = 0xffffu;          // a track that is a whole file (a sidecar)

struct TitleRendition {
  std::uint32_t entry = 0;                               // the catalog index of its movie
  std::string label;                                     // from "NAME - LABEL.ext"
  std::uint32_t frame_rate_num = 0, frame_rate_den = 0;  // 0/0: not known
  bool operator==(const TitleRendition&) const = default;
};

enum class TrackKind : std::uint8_t { audio = 1, subtitles = 2 };

struct TitleTrack {
  TrackKind kind = TrackKind::audio;
  bool is_default = false;
  std::string language;  // BCP 47 ("en", "pt-BR"); "" when the file does not say
  std::string codec;     // libavcodec's name
  std::string name;      // the stream's title tag, or ""
  // Where its bytes are: a stream (`stream`) of the movie at catalog index `entry`, or, with
  // kWholeFile, the whole file at `entry` (a sidecar). An audio track's stream is in every
  // rendition; `entry` names the one it was probed in.
  std::uint32_t entry = 0;
  std::uint16_t stream = kWholeFile;
  std::uint16_t channels = 0;                // audio; 0: not known
  std::uint32_t rendition = kAllRenditions;  // a sidecar of one rendition: that rendition's entry
  bool operator==(const TitleTrack&) const = default;
};

struct Title {
  std::string name;                        // the folder's path, a valid movie name ("Films/Ladder (2024)")
  std::vector<TitleRendition> renditions;  // at least 1, highest bit rate first
  std::vector<TitleTrack> tracks;          // audio, then subtitles
  bool operator==(const Title&) const = default;
};

// Wire layout of the titles area: a header, the titles, all renditions, all tracks, then the text
// of the titles' names. Offsets are from the area's start; the area follows the names area.
struct WireTitlesHeader {
  be32 title_count;
  be32 rendition_count;
  be32 track_count;
  be32 text_length;
};
static_assert(sizeof(WireTitlesHeader) == 16);

struct WireTitle {
  be32 name_offset;
  be16 name_length;
  be16 reserved0;
  be32 first_rendition;  // into the renditions
  be16 rendition_count;
  be16 track_count;
  be32 first_track;  // into the tracks
  std::uint8_t reserved[12];
};
static_assert(sizeof(WireTitle) == 32);

struct WireTitleRendition {
  be32 entry;
  be32 frame_rate_num;
  be32 frame_rate_den;
  be32 reserved0;
  char label[kTitleLabelMax + 1];  // NUL-padded printable ASCII
};
static_assert(sizeof(WireTitleRendition) == 48);

struct WireTitleTrack {
  std::uint8_t kind;
  std::uint8_t flags;  // bit 0: default
  be16 stream;
  be16 channels;
  be16 reserved0;
  be32 entry;
  be32 rendition;
  char language[kLanguageTagMax + 1];
  char codec[kTrackCodecMax + 1];
  char name[kTrackNameMax + 1];  // NUL-padded UTF-8
};
static_assert(sizeof(WireTitleTrack) == 96);

// A frame's duration at num/den frames per second, or 1/24 s when the rate is not known (0/0): the
// tolerance between aligned keyframes of two renditions is the longer of theirs.
std::uint64_t frame_duration_us(std::uint32_t num, std::uint32_t den) noexcept;
// How far a keyframe of rendition `r` may be from the title's (its first rendition's): the longer
// frame duration of the two. What the server checks when it groups a title, and where the proxy's
// HLS and a client's TitleReader cut every rendition.
std::uint64_t alignment_tolerance_us(const TitleRendition& first, const TitleRendition& r) noexcept;

// The title named `name`, or the one whose renditions include catalog entry `entry`; or nullptr.
const Title* find_title(const std::vector<Title>& titles, const std::string& name) noexcept;
const Title* title_of_rendition(const std::vector<Title>& titles, std::uint32_t entry) noexcept;

// Why a BCP 47 tag as the catalog keeps it is not one, or nullptr: 2..15 bytes of letters, digits
// and '-', starting with 2 or 3 letters, no empty subtag.
const char* invalid_language_reason(const std::string& tag) noexcept;

// The titles area for `titles` of a catalog with `entry_count` entries. Throws std::invalid_argument
// for what cannot be published (the decoder's rules below).
std::vector<std::uint8_t> encode_titles(const std::vector<Title>& titles, std::size_t entry_count);

// Decodes a titles area. Every entry index is below `entry_count`; the caller checks what they
// name (a movie, not a live channel). At most kTitleRenditionsMax renditions and kTitleTracksMax
// tracks per title; titles sorted by name, no two alike.
Decoded<std::vector<Title>> decode_titles(Bytes area, std::size_t entry_count);

}  // namespace vod::proto
