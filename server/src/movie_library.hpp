// The movies of a media directory, loaded into memory once, probed and indexed. A scan produces one
// catalog generation; movies whose file did not change are shared with the previous generation, so
// a SIGHUP rescan reloads only what changed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cache/cached_file.hpp"
#include "cache/index_store.hpp"
#include "host_buffer.hpp"
#include "vod/media/media_info.hpp"
#include "vod/protocol/catalog_titles.hpp"
#include "vod/protocol/keyframe_index_layout.hpp"

namespace vod::server {

struct LoadedMovie {
  std::string name;  // the path below the media directory: what clients ask for
  std::string path;
  std::uint64_t file_size = 0;  // on disk, for change detection
  std::int64_t mtime_ns = 0;
  ino_t inode = 0;
  HostBuffer bytes;  // what clients read: the file, or its MPEG-TS remux; empty when cached
  // Served from the segment cache (--cache-size, not pinned): its file and segment table.
  std::shared_ptr<cache::CachedFile> cached;
  media::MediaInfo info;
  // A cached movie's index is built lazily, in place in index_bytes; the LazyIndexer then sets
  // `index` and clears `index_pending` on the event loop (the only thread that reads them after start).
  mutable proto::KeyframeIndex index;
  HostBuffer index_bytes;              // the index in the protocol layout
  mutable bool index_pending = false;  // a cached movie whose index the LazyIndexer builds after start
  // A cached movie listed before it was probed (past the scan's probe budget): raw bytes, no index,
  // until the LazyIndexer probes it and a described copy replaces it in the library.
  bool probe_pending = false;
  bool remuxed = false;
  // The content identity of what clients read (cache/content_digest.hpp): a pinned movie's is hashed
  // as it loads; a cached movie's comes from the state directory or, unknown until then, from the
  // LazyIndexer, which sets it on the event loop (the only thread that reads it).
  mutable proto::ContentId content;
  // A movie of an HTTP origin (vod-server --origin): `path` is its URL, `mtime_ns` a hash of its
  // ETag (the version the state directory keys on), `origin_mtime` what the listing said (a rescan
  // keeps the movie while it says the same), `layout` its segment table's.
  std::string origin_mtime;
  cache::TableLayout layout;
  // A live channel's DVR window (live/channels.hpp), listed after the library's movies: `cached`
  // is its chunks, `index_bytes` its window index (vod/protocol/live_window.hpp).
  bool live_window = false;

  std::uint64_t size() const noexcept { return cached ? cached->size() : bytes.length(); }
  cache::FileIdentity identity() const { return {path, file_size, mtime_ns, inode}; }  // the file's version listed
};

struct LibraryOptions {
  bool remux_ts = false;                 // --remux ts
  std::set<std::string> reserved_names;  // the live channels': top-level files with these names are skipped
  // With a segment cache: movies are served from it, except those --pin names (shell patterns),
  // which are loaded whole while they fit `pin_budget` bytes (0: no limit).
  std::optional<cache::TableLayout> cache;
  std::vector<std::string> pin;
  std::uint64_t pin_budget = 0;
  const cache::IndexStore* index_store = nullptr;  // --state-dir: cached movies' indexes kept across restarts
  // How long a scan probes cached movies before it lists the rest unprobed (probed after start).
  std::chrono::milliseconds probe_budget{2000};
  std::string origin;  // --origin: the library is listed from this URL (origin/origin_library.hpp), not a directory
};

struct Library {
  std::uint32_t generation = 0;
  std::vector<std::shared_ptr<const LoadedMovie>> movies;  // sorted by name, unique name hashes
  // New cached movies whose index or content identity is pending (the LazyIndexer's work).
  std::vector<std::shared_ptr<const LoadedMovie>> unindexed;
  // The titles the catalog lists (titles/library_titles.hpp), grouped each time it is offered.
  std::vector<proto::Title> titles;
  std::uint64_t total_bytes() const noexcept;
};

// Probes a cached movie (headers, through a mapping) and gives it its index region: the one kept in
// `store`, or a pending one. Throws what the probe refuses.
void describe_cached(LoadedMovie& m, const cache::IndexStore* store);
// A described copy of a movie listed unprobed, sharing its file and segment table.
std::shared_ptr<LoadedMovie> describe_copy(const LoadedMovie& listed, const cache::IndexStore* store);

// Scans `dir`: every regular, non-hidden file below it (walk_library) becomes a movie named by its
// path. Files that cannot be read or named are skipped with a warning; the scan itself fails only
// when `dir` cannot be listed.
Library scan_library(const std::string& dir, std::uint32_t generation, const Library* previous, const LibraryOptions& options);

}  // namespace vod::server
