// SPDX-License-Identifier: LGPL-2.1-or-later
// A movie served from the segment cache: its file, opened for the disk reads, and its segment
// table (vod/protocol/segment_table.hpp), the RDMA-readable region clients check entries in. The
// server writes an entry with one aligned 8-byte store; its own copy of the entries is the truth.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "host_buffer.hpp"
#include "vod/protocol/segment_table.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::cache {

// What every table of one server says beside its movie's size: the arena and the client's rules.
struct TableLayout {
  std::uint32_t segment_size = 4u << 20;
  std::uint64_t arena_length = 0;
  std::uint32_t read_deadline_ms = 3000;
  std::uint16_t request_credits = 16;
  std::uint32_t grace_ms = 2000;
};

class CachedFile {
 public:
  // Opens `path` (O_DIRECT where its file system allows it) and lays out its table, every segment
  // absent. Throws std::runtime_error naming open and errno.
  CachedFile(std::uint64_t id, std::string path, std::uint64_t size, const TableLayout& layout);

  std::uint64_t id() const noexcept { return id_; }
  const std::string& path() const noexcept { return path_; }
  std::uint64_t size() const noexcept { return size_; }
  std::uint32_t segment_size() const noexcept { return segment_size_; }
  std::uint32_t segments() const noexcept { return static_cast<std::uint32_t>(entries_.size()); }
  // Bytes of segment `s` (the last one may be short).
  std::uint32_t segment_length(std::uint32_t s) const noexcept;
  const HostBuffer& table() const noexcept { return table_; }
  std::uint64_t table_length() const noexcept { return proto::segment_entry_offset(segments()); }

  const proto::SegmentEntry& entry(std::uint32_t s) const { return entries_.at(s); }
  // Segment `s` is now in `slot`, or (nullopt) in none: a new generation, published to the table.
  proto::SegmentEntry publish(std::uint32_t s, std::optional<std::uint32_t> slot);

  // The fd disk reads use, and the length to read for segment `s` (rounded up to the device's
  // block for O_DIRECT; the read ends at the end of the file).
  int read_fd() const noexcept { return direct_ ? direct_fd_.get() : buffered_fd_.get(); }
  std::size_t read_length(std::uint32_t s) const noexcept;
  bool direct() const noexcept { return direct_; }
  // O_DIRECT was refused at read time (EINVAL): read through the page cache from now on.
  void stop_direct() noexcept { direct_ = false; }

 private:
  std::uint64_t id_;
  std::string path_;
  std::uint64_t size_;
  std::uint32_t segment_size_;
  UniqueFd buffered_fd_, direct_fd_;
  bool direct_ = false;
  std::vector<proto::SegmentEntry> entries_;
  HostBuffer table_;
};

}  // namespace vod::server::cache
