// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/dvr_window.hpp"

#include <endian.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "vod/log.hpp"
#include "vod/protocol/live_messages.hpp"
#include "vod/protocol/live_window.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server::live {

namespace {
// A keyframe mark at most this often (a discontinuity always gets one): the index has room for the
// window at four marks a second, whatever the stream's GOP.
constexpr std::uint64_t kMarkEveryUs = 250'000;
constexpr std::uint64_t kErrorLogEveryUs = 10'000'000;

void store_be64(std::uint8_t* at, std::uint64_t host_value) noexcept {
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(at)).store(htobe64(host_value), std::memory_order_relaxed);
}

std::uint32_t capacity_for(std::chrono::milliseconds duration) {
  const std::uint64_t marks = static_cast<std::uint64_t>(duration.count()) * 4 / 1000 + 64;
  return static_cast<std::uint32_t>(std::min<std::uint64_t>(marks, proto::kWindowMaxCapacity));
}

std::filesystem::path window_path(const std::filesystem::path& dir, const std::string& channel) {
  char name[40];
  std::snprintf(name, sizeof name, "window-%016llx.dvr", static_cast<unsigned long long>(proto::name_hash(channel)));
  return dir / name;
}
}  // namespace

std::uint64_t DvrWindow::index_length(std::chrono::milliseconds duration) { return proto::window_region_length(capacity_for(duration)); }

DvrWindow::DvrWindow(const std::string& channel, const DvrOptions& options, std::uint8_t* index)
    : channel_(channel),
      path_(window_path(options.dir, channel)),
      duration_(options.duration),
      capacity_(capacity_for(options.duration)),
      index_(index) {
  limits_.segment_size = options.segment_size;
  // One chunk more than the bytes: the chunk being written holds none of the window's older bytes.
  limits_.segments = static_cast<std::uint32_t>(
      std::clamp<std::uint64_t>((options.bytes + options.segment_size - 1) / options.segment_size + 1, 2, 1u << 24));
  limits_.duration_us = static_cast<std::uint64_t>(options.duration.count()) * 1000;
  std::error_code ec;
  std::filesystem::create_directories(options.dir, ec);
  fd_.reset(::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd_)
    throw std::runtime_error("--live-dvr: cannot create " + path_.string() + " for " + channel + "'s window: " + std::strerror(errno));
  // Reserved now: a disk without room for the window is refused at start, not found full later.
  if (const int e = ::posix_fallocate(fd_.get(), 0, static_cast<off_t>(bytes())); e != 0) {
    ::unlink(path_.c_str());
    throw std::runtime_error("--live-dvr: cannot reserve " + std::to_string(bytes() >> 20) + " MiB for " + channel + "'s window in " +
                             path_.string() + ": " + std::strerror(e));
  }
  proto::WindowIndex initial;
  initial.header.segment_size = limits_.segment_size;
  initial.header.segment_count = limits_.segments;
  initial.header.keyframe_capacity = capacity_;
  initial.header.duration_ms = static_cast<std::uint32_t>(std::min<std::int64_t>(options.duration.count(), 0xffffffffll));
  const auto bytes = proto::encode(initial);
  std::memcpy(index_, bytes.data(), bytes.size());
}

void DvrWindow::append(std::span<const std::uint8_t> bytes, const WindowRecord& record) {
  if (bytes.empty()) return;
  const std::uint64_t claim = record.offset + bytes.size();
  // 1. Claim the bytes (a fill of their chunk checks this after its read) and declare what they
  //    overwrite gone, before touching the file.
  claim_.store(claim, std::memory_order_release);
  forget_before(claim, end_time_);
  const std::uint64_t gone = std::min(window_oldest(limits_, claim, end_time_, marks_), end_.load(std::memory_order_relaxed));
  if (gone > oldest_) {
    oldest_ = gone;
    store_header();
  }
  // 2. The bytes.
  if (!write_at(record.offset, bytes, record.publish_time_us)) {  // what the file holds here is not the stream: the window starts again
    marks_.clear();
    restart_.store(claim, std::memory_order_release);
  }
  // 3. Publish them.
  end_.store(claim, std::memory_order_release);
  end_time_ = record.publish_time_us;
  stream_id_ = record.stream_id;
  flags_ = 0;
  const bool keyframe = (record.flags & proto::kLiveKeyframe) != 0;
  const bool discontinuity = (record.flags & proto::kLiveDiscontinuity) != 0;
  if (discontinuity || (keyframe && (marks_.empty() || record.publish_time_us >= last_mark_time_ + kMarkEveryUs)))
    add_mark(record, keyframe, discontinuity);
  forget_before(claim, end_time_);
  oldest_ = window_oldest(limits_, claim, end_time_, marks_);
  oldest_time_ = end_time_;
  for (const auto& m : marks_)
    if (m.offset == oldest_) {
      oldest_time_ = m.time_us;
      break;
    }
  store_header();
}

// Marks below the byte floor, or older than the duration, never bound the window again.
void DvrWindow::forget_before(std::uint64_t claim, std::uint64_t newest_time_us) {
  const std::uint64_t floor = byte_floor(limits_, claim);
  const std::uint64_t since = time_floor(limits_, newest_time_us);
  while (!marks_.empty() && (marks_.front().offset < floor || marks_.front().time_us < since)) marks_.pop_front();
}

void DvrWindow::add_mark(const WindowRecord& record, bool keyframe, bool discontinuity) {
  if (marks_.size() == capacity_) marks_.pop_front();  // its slot is the one rewritten now
  marks_.push_back({record.offset, record.publish_time_us, keyframe});
  if (keyframe) last_mark_time_ = record.publish_time_us;
  const std::uint64_t k = marks_next_++;
  std::uint8_t* at = index_ + proto::window_mark_offset(k, capacity_);
  store_be64(at + offsetof(proto::WireWindowMark, number_begin), k + 1);
  std::atomic_thread_fence(std::memory_order_release);
  store_be64(at + offsetof(proto::WireWindowMark, offset), record.offset);
  store_be64(at + offsetof(proto::WireWindowMark, publish_time_us), record.publish_time_us);
  store_be64(at + offsetof(proto::WireWindowMark, pts_us), record.pts_us);
  const std::uint32_t flags = (keyframe ? proto::kWindowMarkKeyframe : 0) | (discontinuity ? proto::kWindowMarkDiscontinuity : 0);
  store_be64(at + offsetof(proto::WireWindowMark, stream_id), (std::uint64_t{record.stream_id} << 32) | flags);
  std::atomic_thread_fence(std::memory_order_release);
  store_be64(at + offsetof(proto::WireWindowMark, number_end), k + 1);
}

void DvrWindow::end_stream(std::uint32_t stream_id) {
  stream_id_ = stream_id;
  flags_ = proto::kWindowEndOfStream;
  store_header();
}

bool DvrWindow::write_at(std::uint64_t offset, std::span<const std::uint8_t> bytes, std::uint64_t now) {
  const std::uint64_t size = this->bytes();
  std::size_t done = 0;
  while (done < bytes.size()) {
    const std::uint64_t at = (offset + done) % size;
    const std::size_t piece = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size() - done, size - at));
    const ssize_t w = ::pwrite(fd_.get(), bytes.data() + done, piece, static_cast<off_t>(at));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ++write_errors_;
      if (now >= last_error_log_us_ + kErrorLogEveryUs) {
        last_error_log_us_ = now;
        log::error("live", channel_ + ": writing the DVR window " + path_.string() + ": " +
                               (w < 0 ? std::strerror(errno) : "nothing written") +
                               "; the window starts again after this record (the channel goes on)");
      }
      return false;
    }
    done += static_cast<std::size_t>(w);
  }
  return true;
}

void DvrWindow::store_header() noexcept {
  std::uint8_t* h = index_;
  ++sequence_;
  store_be64(h + offsetof(proto::WireWindowHeader, seq_begin), sequence_);
  std::atomic_thread_fence(std::memory_order_release);
  store_be64(h + offsetof(proto::WireWindowHeader, oldest_offset), oldest_);
  store_be64(h + offsetof(proto::WireWindowHeader, oldest_time_us), oldest_time_);
  store_be64(h + offsetof(proto::WireWindowHeader, end_offset), end_.load(std::memory_order_relaxed));
  store_be64(h + offsetof(proto::WireWindowHeader, end_time_us), end_time_);
  store_be64(h + offsetof(proto::WireWindowHeader, keyframes_next), marks_next_);
  store_be64(h + offsetof(proto::WireWindowHeader, stream_id), (std::uint64_t{stream_id_} << 32) | flags_);
  std::atomic_thread_fence(std::memory_order_release);
  store_be64(h + offsetof(proto::WireWindowHeader, seq_end), sequence_);
}

std::optional<std::uint32_t> DvrWindow::complete_lap(std::uint32_t chunk) const noexcept {
  const std::uint64_t claim = claim_.load(std::memory_order_acquire);
  const std::uint64_t end = end_.load(std::memory_order_acquire);
  const std::uint64_t n = limits_.segments, s = limits_.segment_size;
  if (claim == 0 || chunk >= n) return std::nullopt;
  const std::uint64_t last = (claim - 1) / s;  // the newest segment touched
  const std::uint64_t at = last % n;
  if (at < chunk && last < n) return std::nullopt;  // never written
  const std::uint64_t g = at >= chunk ? last - (at - chunk) : last - at - n + chunk;
  if ((g + 1) * s > end) return std::nullopt;                                 // being written
  if (g * s < restart_.load(std::memory_order_acquire)) return std::nullopt;  // holds bytes of a failed write
  return static_cast<std::uint32_t>(g / n);
}

}  // namespace vod::server::live
