// Probing and keyframe indexing with libavformat, over bytes already in memory: the server has
// loaded each movie once into the region it registers, and these read that same region, so a 1 GiB
// movie is never held twice.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "vod/media/media_info.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"

namespace vod::media {

using Bytes = std::span<const std::uint8_t>;

// Called with (bytes demuxed so far, total bytes) about every 1% of the file.
using Progress = std::function<void(std::uint64_t done, std::uint64_t total)>;

// Never throws for bad content: garbage, empty and truncated files come back with is_media false
// (or with what could be learned) and a note saying why. `name` is only used in notes.
MediaInfo probe(Bytes bytes, const std::string& name);
// The same over bytes read by offset (a movie at an HTTP origin: vod-server --origin): only what
// the demuxer asks for is read.
using ReadAt = std::function<std::size_t(std::uint64_t offset, std::span<std::uint8_t> dest)>;
MediaInfo probe(std::uint64_t size, const ReadAt& read_at, const std::string& name);

// The keyframe index of the best video stream: for each keyframe, its presentation time from the
// start of the movie and the byte offset of its packet, as libavformat reports it (the same `pos`
// that ffprobe -show_packets prints). A file without video, or not media, gives an empty index.
// A truncated file gives the keyframes found before the damage. docs/media.md says what an offset
// means for each container; the index flags say it too.
proto::KeyframeIndex index_keyframes(Bytes bytes, const MediaInfo& info, const Progress& progress = {});
proto::KeyframeIndex index_keyframes(std::uint64_t size, const ReadAt& read_at, const MediaInfo& info, const Progress& progress = {});

// The keyframe index a container keeps itself, read without demuxing a packet: MP4's sample tables
// (moov) and Matroska's Cues. Entries are the same as index_keyframes' (a Matroska entry is its
// cluster's offset, where a demuxer given the header resumes). nullopt when the container keeps
// none: MPEG-TS, a Matroska file without Cues, a fragmented MP4. Reads only the header and, for
// Matroska, the Cues (which a SeekHead names).
std::optional<proto::KeyframeIndex> container_index(std::uint64_t size, const ReadAt& read_at, const MediaInfo& info);

}  // namespace vod::media
