// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel's memory: the ring clients RDMA-Read the stream from, and the 64-byte header region
// beside it (proto::WireLiveHeader) that says which stream offsets are valid. Byte s of the stream
// lives at ring offset s mod size; offsets only grow.
//
// The one writer (the channel's source thread) keeps the order that makes overwrites detectable:
// before it overwrites ring bytes it publishes the new oldest offset, and only after the bytes are
// in place does it publish the new write offset. Each header update is a seqlock: seq_begin first,
// the fields, seq_end last, with release fences between. A client that reads bytes [a, b) and then
// (on the same QP, so after them) the header, and finds oldest ≤ a, holds bytes that were not
// overwritten while it read them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "host_buffer.hpp"
#include "vod/protocol/live_messages.hpp"

namespace vod::server::live {

class LiveRing {
 public:
  explicit LiveRing(std::size_t ring_bytes);

  struct Placed {
    std::uint64_t offset = 0;                     // stream offset of the record's first byte
    std::uint64_t oldest = 0;                     // oldest valid stream offset after the write
    std::uint64_t keyframe = proto::kNoKeyframe;  // newest keyframe record after the write
  };
  // Writes one record (at most size()/2 bytes) at the write offset and publishes it.
  Placed publish(std::span<const std::uint8_t> record, bool random_access, std::uint64_t pts_us);
  // A new source session (stream id), or the end of one: published in the header's flags.
  void set_stream(std::uint32_t stream_id, bool end_of_stream);

  std::size_t size() const noexcept { return ring_.length(); }
  std::uint64_t write_offset() const noexcept { return write_; }
  std::uint64_t oldest_offset() const noexcept { return oldest_; }
  std::uint64_t keyframe_offset() const noexcept { return keyframe_; }
  // The memory that is registered REMOTE_READ on every device.
  const HostBuffer& ring_memory() const noexcept { return ring_; }
  const HostBuffer& header_memory() const noexcept { return header_; }

 private:
  void store_header() noexcept;

  HostBuffer ring_;
  HostBuffer header_;
  std::uint64_t write_ = 0, oldest_ = 0, keyframe_ = proto::kNoKeyframe, keyframe_pts_ = 0;
  std::uint32_t stream_id_ = 0, flags_ = 0;
  std::uint64_t sequence_ = 0;
};

}  // namespace vod::server::live
