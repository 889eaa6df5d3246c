// SPDX-License-Identifier: LGPL-2.1-or-later
// A library that lives at an HTTP origin (vod-server --origin URL): listed from nginx's JSON
// autoindex, every object served from the segment cache and filled by Range requests.
//
// A scan reads only headers: each new object is probed through a RangeSource (a few 256 KiB ranges),
// its version is the strong ETag of those responses, its content identity derives from that tag
// (cache/content_digest.hpp, kContentOriginTag), and its keyframe index is the container's own
// (MP4's sample tables, Matroska's Cues), read by ranges too. An object whose container keeps no
// index (MPEG-TS) is indexed by the LazyIndexer after start. An object listed again with the same
// size and modification time keeps its movie, and what the cache holds of it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "movie_library.hpp"
#include "origin/origin_client.hpp"

namespace vod::server::cache {
class CacheReader;
}

namespace vod::server::origin {

// The HTTP settings of every blocking read of the origin (scans, probes, indexes): set once at start.
void configure(const FetcherOptions& options);
// This thread's client (one connection to the origin per thread that reads it).
OriginClient& thread_client();

// Probes a movie of the origin and gives it its version, identity and index region (kept in
// `store`, the container's own, or pending). Throws OriginError, or what the probe refuses.
void describe_origin(LoadedMovie& m, const cache::IndexStore* store);

// The keyframe index of an origin movie whose container keeps none (MPEG-TS), built on its first
// use: every segment is read through the segment cache (`reader`), so the origin sends it once for
// the index and the viewers. `step` is a stop check that may throw.
proto::KeyframeIndex index_origin_movie(const LoadedMovie& m, cache::CacheReader& reader, const std::function<void()>& step);

// Lists the origin `base` into generation `generation` (movies of `previous` whose object did not
// change are shared). Throws OriginError when the origin cannot be listed.
Library scan_origin(const std::string& base, std::uint32_t generation, const Library* previous, const LibraryOptions& options);

}  // namespace vod::server::origin
