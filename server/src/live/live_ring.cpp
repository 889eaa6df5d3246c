// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/live_ring.hpp"

#include <endian.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vod::server::live {

namespace {
// The header's 8-byte words (proto::WireLiveHeader), stored one word at a time.
enum Word : std::size_t { kFixed = 0, kSeqEnd = 1, kWrite = 2, kOldest = 3, kKeyframe = 4, kKeyframePts = 5, kStream = 6, kSeqBegin = 7 };
static_assert(sizeof(proto::WireLiveHeader) == 8 * 8);
static_assert(offsetof(proto::WireLiveHeader, seq_end) == kSeqEnd * 8 && offsetof(proto::WireLiveHeader, seq_begin) == kSeqBegin * 8);
static_assert(offsetof(proto::WireLiveHeader, write_offset) == kWrite * 8 && offsetof(proto::WireLiveHeader, stream_id) == kStream * 8);

void store_word(std::uint8_t* header, Word w, std::uint64_t host_value) noexcept {
  auto* words = reinterpret_cast<std::uint64_t*>(header);  // HostBuffer memory: page-aligned
  std::atomic_ref<std::uint64_t>(words[w]).store(htobe64(host_value), std::memory_order_relaxed);
}
}  // namespace

LiveRing::LiveRing(std::size_t ring_bytes) : ring_(ring_bytes), header_(sizeof(proto::WireLiveHeader)) {
  if (ring_bytes < 2 * 188) throw std::invalid_argument("a live ring needs room for at least two TS packets");
  const auto fixed = proto::encode(proto::LiveHeader{});
  std::memcpy(header_.data(), fixed.data(), fixed.size());
  store_header();
}

void LiveRing::store_header() noexcept {
  ++sequence_;
  std::uint8_t* h = header_.data();
  store_word(h, kSeqBegin, sequence_);
  std::atomic_thread_fence(std::memory_order_release);
  store_word(h, kWrite, write_);
  store_word(h, kOldest, oldest_);
  store_word(h, kKeyframe, keyframe_);
  store_word(h, kKeyframePts, keyframe_pts_);
  store_word(h, kStream, (std::uint64_t{stream_id_} << 32) | flags_);
  std::atomic_thread_fence(std::memory_order_release);
  store_word(h, kSeqEnd, sequence_);
  std::atomic_thread_fence(std::memory_order_release);
}

LiveRing::Placed LiveRing::publish(std::span<const std::uint8_t> record, bool random_access, std::uint64_t pts_us) {
  const std::size_t n = record.size();
  const std::size_t size = ring_.length();
  if (n == 0 || n > size / 2)
    throw std::invalid_argument("a live record of " + std::to_string(n) + " bytes does not fit half the " + std::to_string(size) +
                                "-byte ring");
  const std::uint64_t at = write_;
  const std::uint64_t end = at + n;
  // 1. Declare the bytes about to be overwritten as gone, before touching them.
  if (end > size && end - size > oldest_) {
    oldest_ = end - size;
    if (keyframe_ != proto::kNoKeyframe && keyframe_ < oldest_) keyframe_ = proto::kNoKeyframe;
    store_header();
  }
  // 2. The bytes, in at most two pieces around the end of the ring.
  const std::size_t pos = static_cast<std::size_t>(at % size);
  const std::size_t first = std::min(n, size - pos);
  std::memcpy(ring_.data() + pos, record.data(), first);
  if (first < n) std::memcpy(ring_.data(), record.data() + first, n - first);
  std::atomic_thread_fence(std::memory_order_release);
  // 3. Publish them.
  write_ = end;
  if (random_access) {
    keyframe_ = at;
    keyframe_pts_ = pts_us;
  }
  store_header();
  return {at, oldest_, keyframe_};
}

void LiveRing::set_stream(std::uint32_t stream_id, bool end_of_stream) {
  stream_id_ = stream_id;
  flags_ = end_of_stream ? proto::kLiveHeaderEndOfStream : 0;
  store_header();
}

}  // namespace vod::server::live
