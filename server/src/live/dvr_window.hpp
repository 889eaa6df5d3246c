// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel's DVR window (vod-server --live-dvr): its last minutes in a file of N chunks of the
// segment cache's size, and the REMOTE_READ window index beside the live header
// (vod/protocol/live_window.hpp). Clients read the window's bytes one-sided from the segment cache,
// which fills a chunk from this file when it is asked for (cache/cached_file.hpp, window mode), so
// the server's memory does not grow with the window: the ring stays as small as it was.
//
// Why the segment cache and not a store of its own: the cache already is memory the clients read
// one-sided, filled from disk on demand, shared fairly and checked by every client Read. What a
// moving window adds is small: the table has one entry per chunk, and an entry's generation is the
// chunk's lap, so a client tells the segment it wants from the one N chunks later.
//
// The source thread is the one writer: append() claims a record's bytes (an atomic a fill checks),
// publishes the window's new oldest offset, writes the bytes into the file, then publishes its new
// end, in the order the ring uses. A fill of a chunk reads it from the file on the event loop's
// io_uring and is kept only if the chunk was not claimed again meanwhile (complete_lap).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include "cache/cached_file.hpp"
#include "live/window_bounds.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::live {

struct DvrOptions {
  std::filesystem::path dir;  // where window files go
  std::chrono::milliseconds duration{0};
  std::uint64_t bytes = 0;         // the window's bytes at most (rounded up to whole chunks, at least 2)
  std::uint32_t segment_size = 0;  // the cache's
};

// What a record tells the window (live::RecordInfo's part of it).
struct WindowRecord {
  std::uint64_t offset = 0;
  std::uint32_t flags = 0;  // proto::kLive* flags
  std::uint32_t stream_id = 0;
  std::uint64_t pts_us = 0;
  std::uint64_t publish_time_us = 0;
};

class DvrWindow final : public cache::WindowSource {
 public:
  // The window index's bytes for a window of `duration`.
  static std::uint64_t index_length(std::chrono::milliseconds duration);

  // Creates the file and reserves its bytes on disk (throws std::runtime_error naming the file,
  // the size and errno: a disk too small is refused at start, not discovered later). The window
  // index is written into `index` (index_length(options.duration) bytes, registered REMOTE_READ
  // by its owner, which outlives the window).
  DvrWindow(const std::string& channel, const DvrOptions& options, std::uint8_t* index);
  DvrWindow(const DvrWindow&) = delete;
  DvrWindow& operator=(const DvrWindow&) = delete;

  // ---- the source thread
  void append(std::span<const std::uint8_t> bytes, const WindowRecord& record);
  void end_stream(std::uint32_t stream_id);

  // ---- any thread
  // The lap (segment / N) of the whole segment chunk `chunk` holds now, unless it is being written.
  std::optional<std::uint32_t> complete_lap(std::uint32_t chunk) const noexcept override;
  int read_fd() const noexcept override { return fd_.get(); }
  const std::filesystem::path& path() const noexcept { return path_; }
  std::uint32_t segment_size() const noexcept { return limits_.segment_size; }
  std::uint32_t segments() const noexcept { return limits_.segments; }
  std::uint64_t bytes() const noexcept { return std::uint64_t{limits_.segment_size} * limits_.segments; }
  std::chrono::milliseconds duration() const noexcept { return duration_; }
  const std::uint8_t* index() const noexcept { return index_; }
  // Writes that failed (each restarts the window). The source thread's, as append() is.
  std::uint64_t write_errors() const noexcept { return write_errors_; }

 private:
  void add_mark(const WindowRecord& record, bool keyframe, bool discontinuity);
  void forget_before(std::uint64_t claim, std::uint64_t newest_time_us);
  void store_header() noexcept;
  bool write_at(std::uint64_t offset, std::span<const std::uint8_t> bytes, std::uint64_t now_us);

  std::string channel_;
  std::filesystem::path path_;
  WindowLimits limits_;
  std::chrono::milliseconds duration_;
  std::uint32_t capacity_;
  UniqueFd fd_;
  std::uint8_t* index_;
  std::atomic<std::uint64_t> claim_{0};    // end of the bytes the writer has claimed (may be writing)
  std::atomic<std::uint64_t> end_{0};      // end of the bytes written
  std::atomic<std::uint64_t> restart_{0};  // a write failed before this offset: no segment starting before it is served
  // The writer's own state.
  std::deque<WindowPoint> marks_;  // held in the region, oldest first
  std::uint64_t marks_next_ = 0;
  std::uint64_t oldest_ = 0, oldest_time_ = 0, end_time_ = 0, sequence_ = 0, last_mark_time_ = 0;
  std::uint32_t stream_id_ = 0, flags_ = 0;
  std::uint64_t last_error_log_us_ = 0;
  std::uint64_t write_errors_ = 0;
};

}  // namespace vod::server::live
