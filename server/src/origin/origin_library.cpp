// SPDX-License-Identifier: LGPL-2.1-or-later
#include "origin/origin_library.hpp"

#include <atomic>
#include <chrono>
#include <mutex>
#include <unordered_map>

#include "cache/cache_reader.hpp"
#include "cache/content_digest.hpp"
#include "cache/lazy_indexer.hpp"
#include "vod/log.hpp"
#include "vod/media/probe.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server::origin {

namespace {

std::mutex config_mutex;
FetcherOptions configured;
std::atomic<std::uint64_t> next_origin_id{1ull << 62};  // apart from the ids of files on disk

std::string kib(std::uint64_t bytes) { return std::to_string((bytes + 1023) / 1024) + " KiB"; }

}  // namespace

void configure(const FetcherOptions& options) {
  std::lock_guard lock(config_mutex);
  configured = options;
}

OriginClient& thread_client() {
  thread_local std::unique_ptr<OriginClient> client;
  if (!client) {
    std::lock_guard lock(config_mutex);
    client = std::make_unique<OriginClient>(configured);
  }
  return *client;
}

void describe_origin(LoadedMovie& m, const cache::IndexStore* store) {
  OriginClient& client = thread_client();
  const std::uint64_t before = client.bytes_fetched();
  RangeSource source(client, m.path, m.file_size);
  const media::ReadAt read_at = source.reader();
  m.info = media::probe(m.file_size, read_at, m.name);
  if (!source.failure().empty()) throw OriginError(source.failure());  // the probe's verdict would be the failure's
  if (m.info.refused) throw std::runtime_error(m.info.note);
  if (!source.read_any()) {  // nothing probed it (it is not media): one byte names its version
    std::uint8_t b;
    read_at(0, std::span<std::uint8_t>(&b, 1));
  }
  m.probe_pending = false;
  const std::string& etag = source.etag();
  m.mtime_ns = static_cast<std::int64_t>(proto::name_hash(etag));  // the version the state directory keeps things under
  m.cached = std::make_shared<cache::CachedFile>(next_origin_id++, cache::OriginObject{m.path, etag}, m.file_size, m.layout);
  if (!etag.empty()) m.content = cache::origin_content_id(m.file_size, m.name, etag);
  else
    log::warn("origin",
              m.path + ": no strong ETag; a change of the object is seen only when its size changes, and it has no content identity");
  if (!m.info.is_media) {
    m.index_bytes = HostBuffer(0);
    log::info("origin", m.name + ": not media, served as raw bytes (" + kib(client.bytes_fetched() - before) + " read)");
    return;
  }
  std::optional<proto::KeyframeIndex> index = store ? store->load(m.identity()) : std::nullopt;
  const char* from = "from the state directory";
  if (!index) {
    index = media::container_index(m.file_size, read_at, m.info);
    if (!source.failure().empty()) throw OriginError(source.failure());
    from = "from the container's own index";
    if (index && store) store->save(m.identity(), *index);
  }
  m.index_pending = !index;
  if (index) m.index = *index;
  m.index_bytes = cache::index_region(index, m.file_size, cache::index_capacity(m.info.duration_us));
  log::info("origin", m.name + ": " + m.info.container + " " + m.info.video_codec + ", " + std::to_string(m.info.duration_us / 1'000'000) +
                          " s, ETag " + (etag.empty() ? "none" : etag) + ", " +
                          (index ? std::to_string(index->entries.size()) + " keyframes " + from : std::string("index pending")) + " (" +
                          kib(client.bytes_fetched() - before) + " read from the origin)");
}

proto::KeyframeIndex index_origin_movie(const LoadedMovie& m, cache::CacheReader& reader, const std::function<void()>& step) {
  std::string failure;
  // Through the cache: each fill checks the version (If-Match), and serves the viewers too. `step`
  // also runs from the demuxing loop, where a throw is not taken for an I/O error.
  auto index = media::index_keyframes(m.file_size, keeping_failure(reader.reader(m.cached, step), failure), m.info,
                                      [&](std::uint64_t, std::uint64_t) { step(); });
  if (!failure.empty()) throw OriginError(m.path + ": " + failure);
  return index;
}

Library scan_origin(const std::string& base, std::uint32_t generation, const Library* previous, const LibraryOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  OriginClient& client = thread_client();
  const std::uint64_t before = client.bytes_fetched(), requests = client.requests();
  const std::vector<ListedObject> objects = crawl(client, base);
  std::unordered_map<std::string, std::shared_ptr<const LoadedMovie>> reusable;
  if (previous)
    for (const auto& m : previous->movies) reusable[m->name] = m;
  Library library;
  library.generation = generation;
  std::unordered_map<std::uint64_t, std::string> hashes;
  std::size_t reused = 0, later = 0;
  for (std::size_t i = 0; i < objects.size(); ++i) {
    const ListedObject& o = objects[i];
    if (const char* why = proto::invalid_name_reason(o.name)) {
      log::warn("origin", "skipping " + o.name + ": " + why);
      continue;
    }
    if (options.reserved_names.count(o.name)) continue;
    if (o.size == 0) {
      log::warn("origin", "skipping " + o.name + ": empty");
      continue;
    }
    if (auto [at, inserted] = hashes.emplace(proto::name_hash(o.name), o.name); !inserted) {
      log::warn("origin", "skipping " + o.name + ": its name hash collides with " + at->second);
      continue;
    }
    if (auto old = reusable.find(o.name); old != reusable.end() && old->second->file_size == o.size &&
                                          old->second->origin_mtime == o.mtime &&
                                          !(old->second->cached && old->second->cached->changed())) {
      library.movies.push_back(old->second);
      ++reused;
      continue;
    }
    auto m = std::make_shared<LoadedMovie>();
    m->name = o.name;
    m->path = object_url(base, o.name);
    m->file_size = o.size;
    m->origin_mtime = o.mtime;
    m->layout = *options.cache;
    const bool probe_later = std::chrono::steady_clock::now() - started > options.probe_budget;
    try {
      if (probe_later) {
        m->cached = std::make_shared<cache::CachedFile>(next_origin_id++, cache::OriginObject{m->path, {}}, m->file_size, m->layout);
        m->index_bytes = HostBuffer(0);
        m->probe_pending = true;
        ++later;
      } else {
        log::info("origin", "probing " + std::to_string(i + 1) + "/" + std::to_string(objects.size()) + ": " + o.name);
        describe_origin(*m, options.index_store);
      }
    } catch (const std::exception& e) {
      log::warn("origin", "skipping " + o.name + ": " + e.what());
      continue;
    }
    if (m->probe_pending || m->index_pending) library.unindexed.push_back(m);
    library.movies.push_back(std::move(m));
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log::info("origin", "generation " + std::to_string(generation) + ": " + std::to_string(library.movies.size()) + " movies at " + base +
                          " (" + std::to_string(reused) + " unchanged, " + std::to_string(later) + " probed after start) in " +
                          std::to_string(secs).substr(0, 5) + " s, " + std::to_string(client.requests() - requests) + " requests, " +
                          kib(client.bytes_fetched() - before) + " read");
  return library;
}

}  // namespace vod::server::origin
