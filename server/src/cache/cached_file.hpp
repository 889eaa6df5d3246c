// SPDX-License-Identifier: LGPL-2.1-or-later
// A movie served from the segment cache: its file as it was listed (path, inode, size, mtime; the
// disk reads open it through the FdCache, which checks it is still that file), and its segment
// table (vod/protocol/segment_table.hpp), the RDMA-readable region clients check entries in. The
// server writes an entry with one aligned 8-byte store; its own copy of the entries is the truth.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host_buffer.hpp"
#include "vod/protocol/segment_table.hpp"

namespace vod::server::cache {

// What every table of one server says beside its movie's size: the arena and the client's rules.
struct TableLayout {
  std::uint32_t segment_size = 4u << 20;
  std::uint64_t arena_length = 0;
  std::uint32_t read_deadline_ms = 3000;
  std::uint16_t request_credits = 16;
  std::uint32_t grace_ms = 2000;
};

// Where a movie of an HTTP origin (vod-server --origin) lives: its URL, and the strong ETag of the
// version listed. Every fill asks for that version (If-Match) and checks the tag that comes back.
struct OriginObject {
  std::string url;
  std::string etag;  // quotes included; empty when the origin gave none (then size alone is checked)
};

// A live channel's DVR window (live/dvr_window.hpp) seen by the cache: a file of chunks that the
// writer laps. Segment k of such a CachedFile is chunk k; its entry's generation is the lap of the
// segment the chunk holds, and a chunk is filled only while that lap is complete and stays so.
class WindowSource {
 public:
  virtual ~WindowSource() = default;
  // The lap of the whole segment chunk `chunk` holds now, unless it is being written or never was.
  virtual std::optional<std::uint32_t> complete_lap(std::uint32_t chunk) const noexcept = 0;
  // A descriptor the cache reads chunks through (the page cache: the writer's bytes may not be on disk yet).
  virtual int read_fd() const noexcept = 0;
};

class CachedFile {
 public:
  // The file listed at `path` (its inode and mtime as stat saw them), with its table laid out, every
  // segment absent. Opens nothing: no descriptor is held for it until a disk read needs one.
  CachedFile(std::uint64_t id, std::string path, std::uint64_t size, std::int64_t mtime_ns, ino_t inode, const TableLayout& layout);

  // A movie at an origin: `path` is its URL; fills are HTTP Range requests (origin/origin_fetcher.hpp).
  CachedFile(std::uint64_t id, OriginObject object, std::uint64_t size, const TableLayout& layout);

  // A DVR window of `bytes` (whole segments); `window` outlives it.
  CachedFile(std::uint64_t id, std::string path, std::uint64_t bytes, const WindowSource& window, const TableLayout& layout);

  std::uint64_t id() const noexcept { return id_; }
  const WindowSource* window() const noexcept { return window_; }
  const std::optional<OriginObject>& origin() const noexcept { return origin_; }
  // A fill found another version at the origin: no segment of this file is filled again, and the
  // ones resident were evicted. The next listing gives the new version a new CachedFile.
  bool changed() const noexcept { return changed_.load(std::memory_order_relaxed); }  // also read by a listing's thread
  void mark_changed() noexcept { changed_ = true; }
  // True the first time a segment of it is asked for (the event loop's): what an index built on
  // first use waits for.
  bool take_first_use() noexcept { return !std::exchange(used_, true); }
  const std::string& path() const noexcept { return path_; }
  std::uint64_t size() const noexcept { return size_; }
  std::int64_t mtime_ns() const noexcept { return mtime_ns_; }
  ino_t inode() const noexcept { return inode_; }
  std::uint32_t segment_size() const noexcept { return segment_size_; }
  std::uint32_t segments() const noexcept { return static_cast<std::uint32_t>(entries_.size()); }
  // Bytes of segment `s` (the last one may be short).
  std::uint32_t segment_length(std::uint32_t s) const noexcept;
  const HostBuffer& table() const noexcept { return table_; }
  std::uint64_t table_length() const noexcept { return proto::segment_entry_offset(segments()); }

  const proto::SegmentEntry& entry(std::uint32_t s) const { return entries_.at(s); }
  // Segment `s` is now in `slot`, or (nullopt) in none: a new generation, published to the table. A
  // window's generation is the lap (`lap`) of what the slot holds, or held.
  proto::SegmentEntry publish(std::uint32_t s, std::optional<std::uint32_t> slot, std::optional<std::uint32_t> lap = std::nullopt);

  // The length to read for segment `s` (rounded up to the device's block for O_DIRECT; the read
  // ends at the end of the file).
  std::size_t read_length(std::uint32_t s) const noexcept;
  // Whether reads go through O_DIRECT: until the file system refuses it (at open or at read time),
  // then through the page cache from now on.
  bool direct() const noexcept { return direct_; }
  void stop_direct() noexcept { direct_ = false; }

 private:
  std::uint64_t id_;
  std::string path_;
  std::uint64_t size_;
  std::int64_t mtime_ns_;
  ino_t inode_;
  std::uint32_t segment_size_;
  bool direct_ = true;
  std::atomic<bool> changed_{false};
  bool used_ = false;
  std::optional<OriginObject> origin_;
  const WindowSource* window_ = nullptr;
  std::vector<proto::SegmentEntry> entries_;
  HostBuffer table_;
};

}  // namespace vod::server::cache
