// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel's DVR window index (vod/protocol/live_window.hpp) as a viewer keeps it: the header
// read afresh at each refresh, and the keyframe marks read once each. The region holds up to 2^20
// marks of 48 bytes (a 72-hour window: 50 MiB); a viewer that read it whole every refresh would
// pull that much every few seconds. So the first refresh reads the marks the window holds, and
// each later one only those published since, from the ring of marks: one or two Reads of a few
// hundred bytes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "vod/client/session.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::client {

// The Session URI of a channel's window (".dvr/NAME").
Uri window_uri(const Uri& channel);

// The window's header alone (128 bytes: its range, not its marks), read until it is consistent (a
// torn snapshot is read again): what a viewer that only shows the range reads. `channel` names it
// in errors.
proto::WindowHeader read_window_header(Session& window, const std::string& channel);

class WindowReader {
 public:
  explicit WindowReader(std::string channel) : channel_(std::move(channel)) {}

  // The header afresh, then the marks published since the last refresh that lie in the window; the
  // marks the window's oldest edge passed are dropped. A read the window's oldest edge overtook is
  // read again. Throws ClientError: protocol_error for an index that does not decode (marks out of
  // order, a header that never reads whole).
  const proto::WindowIndex& refresh(Session& window);
  // The same without I/O, for a header already read: `read(offset, bytes)` returns that part of the
  // index region (refresh's Reads; a test's bytes).
  using RegionRead = std::function<std::vector<std::uint8_t>(std::uint64_t offset, std::size_t bytes)>;
  const proto::WindowIndex& update(const proto::WindowHeader& header, const RegionRead& read);
  const proto::WindowIndex& index() const noexcept { return index_; }
  std::uint64_t reads() const noexcept { return reads_; }
  std::uint64_t mark_bytes_read() const noexcept { return mark_bytes_; }

 private:
  std::string channel_;
  proto::WindowIndex index_;
  std::uint64_t next_ = 0;  // marks [0, next_) were read (or were gone when asked for)
  std::uint64_t reads_ = 0, mark_bytes_ = 0;
};

}  // namespace vod::client
