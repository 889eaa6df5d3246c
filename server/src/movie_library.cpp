// SPDX-License-Identifier: LGPL-2.1-or-later
#include "movie_library.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <unordered_map>

#include "cache/content_digest.hpp"
#include "cache/file_map.hpp"
#include "cache/lazy_indexer.hpp"
#include "library_walk.hpp"
#include "origin/origin_library.hpp"
#include "pinned_load.hpp"
#include "vod/log.hpp"
#include "vod/media/probe.hpp"
#include "vod/media/remux.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server {

namespace fs = std::filesystem;

namespace {

std::string mib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return buf;
}

std::atomic<std::uint64_t> next_cached_id{1};

// Flags 0: '*' matches '/' too, so "Trailers/*" pins a folder with everything below it.
bool pinned_by(const std::string& name, const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return fnmatch(p.c_str(), name.c_str(), 0) == 0; });
}

HostBuffer copy_into_buffer(const std::vector<std::uint8_t>& bytes) {
  HostBuffer b(bytes.size());
  if (!bytes.empty()) std::memcpy(b.data(), bytes.data(), bytes.size());
  return b;
}

void probe_movie(LoadedMovie& m, std::span<const std::uint8_t> bytes) {
  m.info = media::probe(bytes, m.name);
  if (m.info.refused) throw std::runtime_error(m.info.note);  // the scan skips it, saying why
  if (m.info.note.empty()) return;
  // Subtitles beside movies are expected (a title's sidecars: titles/title_grouping.hpp), not a warning.
  const bool subtitles = !m.info.is_media && (m.name.ends_with(".srt") || m.name.ends_with(".vtt"));
  if (subtitles) log::info("library", m.name + ": subtitles, served as raw bytes (and as a title's subtitles beside one)");
  else log::warn("library", m.info.note);
}

void analyse(LoadedMovie& m, std::span<const std::uint8_t> bytes) {
  probe_movie(m, bytes);
  const auto started = std::chrono::steady_clock::now();
  std::uint64_t last_reported = 0;
  m.index = media::index_keyframes(bytes, m.info, [&](std::uint64_t done, std::uint64_t total) {
    if (total >= (256u << 20) && done - last_reported >= total / 4 && done < total) {
      log::info("library", "indexing " + m.name + ": " + std::to_string(done * 100 / total) + "%");
      last_reported = done;
    }
  });
  m.index_bytes = copy_into_buffer(proto::encode_index(m.index));
  if (m.info.is_media)
    log::info(
        "library",
        m.name + ": " + m.info.container + " " + m.info.video_codec + " " + std::to_string(m.info.width) + "x" +
            std::to_string(m.info.height) + ", " + std::to_string(m.info.duration_us / 1'000'000) + " s, " +
            std::to_string(m.info.bitrate_bps / 1000) + " kb/s, " + std::to_string(m.index.entries.size()) + " keyframes indexed in " +
            std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count()) +
            " ms");
}

std::shared_ptr<const LoadedMovie> load_movie(const std::string& name, const fs::path& path, const struct stat& st,
                                              const LibraryOptions& options, bool pin, bool probe_later) {
  auto m = std::make_shared<LoadedMovie>();
  m->name = name;
  m->path = path.string();
  const cache::FileIdentity version = cache::FileIdentity::of(m->path, st);
  m->file_size = version.size;
  m->mtime_ns = version.mtime_ns;
  m->inode = version.inode;
  if (!pin) {
    // Served from the segment cache, never held in memory: its file's descriptors and segment
    // table; probed now (describe_cached) or, past the scan's probe budget, after start.
    m->cached = std::make_shared<cache::CachedFile>(next_cached_id++, m->path, m->file_size, m->mtime_ns, m->inode, *options.cache);
    if (options.index_store) m->content = options.index_store->load_digest(version);
    m->index_bytes = HostBuffer(0);
    if (probe_later) {
      m->probe_pending = true;
      return m;
    }
    describe_cached(*m, options.index_store);
    if (options.remux_ts && m->info.is_media && m->info.container != "mpegts")
      log::warn("library",
                m->name + ": not remuxed to MPEG-TS: it is served from the segment cache as it is on disk (--pin it to remux it)");
    return m;
  }
  m->bytes = load_pinned(m->path, static_cast<std::uint64_t>(st.st_size), m->content);
  analyse(*m, m->bytes.bytes());
  if (options.remux_ts && m->info.is_media && m->info.container != "mpegts") {
    try {
      auto ts = media::remux_to_mpegts(m->bytes.bytes(), m->name);
      log::info("library",
                m->name + ": remuxed " + m->info.container + " to MPEG-TS (" + mib(m->bytes.length()) + " -> " + mib(ts.size()) + ")");
      m->bytes = copy_into_buffer(ts);
      m->remuxed = true;
      m->content = cache::content_id(m->bytes.bytes());  // what clients read: the remux
      analyse(*m, m->bytes.bytes());
    } catch (const std::exception& e) {
      log::warn("library", std::string(e.what()) + "; serving the original bytes");
    }
  }
  return m;
}

}  // namespace

void describe_cached(LoadedMovie& m, const cache::IndexStore* store) {
  if (m.cached && m.cached->origin()) return origin::describe_origin(m, store);
  // Probed through a mapping (headers only); its index is the one kept in the state directory, or
  // built after start (LazyIndexer).
  probe_movie(m, cache::FileMap(m.path, m.file_size, MADV_RANDOM).bytes());
  m.probe_pending = false;
  if (!m.info.is_media) {
    m.index_bytes = HostBuffer(0);  // no index: an empty region, as for a movie served whole
    return;
  }
  auto kept = store ? store->load(m.identity()) : std::nullopt;
  if (kept) m.index = *kept;
  m.index_pending = !kept;
  m.index_bytes = cache::index_region(kept, m.file_size, cache::index_capacity(m.info.duration_us));
  log::info("library", m.name + ": " + m.info.container + " " + m.info.video_codec + ", " + std::to_string(m.info.duration_us / 1'000'000) +
                           " s, " +
                           (kept ? std::to_string(kept->entries.size()) + " keyframes from the state directory" : "index pending"));
}

std::shared_ptr<LoadedMovie> describe_copy(const LoadedMovie& listed, const cache::IndexStore* store) {
  auto m = std::make_shared<LoadedMovie>();
  m->name = listed.name;
  m->path = listed.path;
  m->file_size = listed.file_size;
  m->mtime_ns = listed.mtime_ns;
  m->inode = listed.inode;
  m->cached = listed.cached;  // the same segments: the cache keeps what it holds of them
  m->origin_mtime = listed.origin_mtime;
  m->layout = listed.layout;
  describe_cached(*m, store);  // at an origin: a new file, of the version the probe read
  return m;
}

std::uint64_t Library::total_bytes() const noexcept {
  std::uint64_t n = 0;
  for (const auto& m : movies) n += m->size();
  return n;
}

Library scan_library(const std::string& dir, std::uint32_t generation, const Library* previous, const LibraryOptions& options) {
  if (!options.origin.empty()) return origin::scan_origin(options.origin, generation, previous, options);
  if (dir.empty()) return Library{generation, {}, {}, {}};  // a live-only server
  const std::vector<LibraryFile> files = walk_library(dir, options.reserved_names);

  std::unordered_map<std::string, std::shared_ptr<const LoadedMovie>> reusable;
  if (previous)
    for (const auto& m : previous->movies) reusable[m->name + '\0' + m->path] = m;  // a symlink's name shares its target's path

  Library library;
  library.generation = generation;
  std::unordered_map<std::uint64_t, std::string> hashes;
  const auto started = std::chrono::steady_clock::now();
  std::size_t loaded = 0, reused = 0, later = 0;
  std::uint64_t pinned_bytes = 0;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const fs::path path = files[i].path;
    const std::string& name = files[i].name;
    if (auto [at, inserted] = hashes.emplace(proto::name_hash(name), name); !inserted) {
      log::warn("library", "skipping " + name + ": its name hash collides with " + at->second);
      continue;
    }
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
      log::warn("library", "skipping " + path.string() + ": " + std::strerror(errno));
      continue;
    }
    if (auto old = reusable.find(name + '\0' + path.string()); old != reusable.end() && old->second->identity().same_version(st)) {
      library.movies.push_back(old->second);
      if (!old->second->cached) pinned_bytes += old->second->size();
      ++reused;
      continue;
    }
    bool pin = !options.cache;
    if (!pin && pinned_by(name, options.pin)) {
      pin = options.pin_budget == 0 || pinned_bytes + static_cast<std::uint64_t>(st.st_size) <= options.pin_budget;
      if (!pin)
        log::warn("library", name + ": matches --pin but does not fit --pin-budget (" + mib(pinned_bytes) +
                                 " pinned already): serving it from the segment cache");
    }
    // Past the probe budget a cached movie is listed as it is and probed after the server listens:
    // starting does not grow with the library (pinned movies are loaded whole, by design).
    const bool probe_later = !pin && std::chrono::steady_clock::now() - started > options.probe_budget;
    if (!probe_later)
      log::info("library", std::string(pin ? "loading " : "probing (segment cache) ") + std::to_string(i + 1) + "/" +
                               std::to_string(files.size()) + ": " + name + " (" + mib(static_cast<std::uint64_t>(st.st_size)) + ")");
    try {
      library.movies.push_back(load_movie(name, path, st, options, pin, probe_later));
      later += probe_later;
      if (pin) pinned_bytes += library.movies.back()->size();
      const auto& m = library.movies.back();
      if (m->probe_pending || m->index_pending || !m->content.known()) library.unindexed.push_back(m);
      ++loaded;
    } catch (const std::exception& e) {
      log::warn("library", "skipping " + path.string() + ": " + e.what());
    }
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log::info("library", "generation " + std::to_string(generation) + ": " + std::to_string(library.movies.size()) + " movies, " +
                           mib(library.total_bytes()) + " (" + std::to_string(loaded) + " loaded, " + std::to_string(reused) +
                           " unchanged) in " + std::to_string(secs).substr(0, 5) + " s");
  if (later)
    log::info("library", std::to_string(later) + " movies listed without a probe (past the " +
                             std::to_string(options.probe_budget.count()) +
                             " ms probe budget): probed after the server listens, and listed as raw bytes until then");
  if (library.movies.empty()) log::warn("library", "the media directory " + dir + " holds no servable file");
  return library;
}

}  // namespace vod::server
