// SPDX-License-Identifier: LGPL-2.1-or-later
#include "cache/cached_file.hpp"

#include <endian.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

namespace vod::server::cache {

namespace {
constexpr std::size_t kDirectAlign = 4096;
}

CachedFile::CachedFile(std::uint64_t id, std::string path, std::uint64_t size, std::int64_t mtime_ns, ino_t inode,
                       const TableLayout& layout)
    : id_(id), path_(std::move(path)), size_(size), mtime_ns_(mtime_ns), inode_(inode), segment_size_(layout.segment_size) {
  const std::uint64_t count = (size_ + segment_size_ - 1) / segment_size_;
  if (count > 0xffffffffu) throw std::runtime_error(path_ + ": too many segments");
  entries_.assign(static_cast<std::size_t>(count), proto::SegmentEntry{});
  proto::SegmentTableHeader h;
  h.segment_size = segment_size_;
  h.segment_count = static_cast<std::uint32_t>(count);
  h.movie_size = size_;
  h.arena_length = layout.arena_length;
  h.read_deadline_ms = layout.read_deadline_ms;
  h.request_credits = layout.request_credits;
  h.grace_ms = layout.grace_ms;
  const auto bytes = proto::encode_segment_table(h, entries_);
  table_ = HostBuffer(bytes.size());
  std::memcpy(table_.data(), bytes.data(), bytes.size());
}

CachedFile::CachedFile(std::uint64_t id, OriginObject object, std::uint64_t size, const TableLayout& layout)
    : CachedFile(id, object.url, size, 0, 0, layout) {
  direct_ = false;
  origin_ = std::move(object);
}

CachedFile::CachedFile(std::uint64_t id, std::string path, std::uint64_t bytes, const WindowSource& window, const TableLayout& layout)
    : CachedFile(id, std::move(path), bytes, 0, 0, layout) {
  direct_ = false;
  window_ = &window;
}

std::uint32_t CachedFile::segment_length(std::uint32_t s) const noexcept {
  const std::uint64_t start = std::uint64_t{s} * segment_size_;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(segment_size_, size_ - start));
}

std::size_t CachedFile::read_length(std::uint32_t s) const noexcept {
  const std::size_t n = segment_length(s);
  return direct_ ? (n + kDirectAlign - 1) / kDirectAlign * kDirectAlign : n;
}

proto::SegmentEntry CachedFile::publish(std::uint32_t s, std::optional<std::uint32_t> slot, std::optional<std::uint32_t> lap) {
  proto::SegmentEntry& e = entries_.at(s);
  if (!window_) ++e.generation;
  else if (lap) e.generation = *lap;  // a window's: the lap of its bytes, which only grows; unchanged by an eviction
  e.state = slot ? proto::SegmentState::resident : proto::SegmentState::absent;
  e.slot = slot.value_or(0);
  // One aligned 8-byte store, released after the slot's bytes (written by the disk read and seen
  // by this thread through the completion): a Read of the entry sees the old word or the new one.
  auto* word = reinterpret_cast<std::uint64_t*>(table_.data() + proto::segment_entry_offset(s));
  std::atomic_ref<std::uint64_t>(*word).store(htobe64(proto::pack(e)), std::memory_order_release);
  return e;
}

}  // namespace vod::server::cache
