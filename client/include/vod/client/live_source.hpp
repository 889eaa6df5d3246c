// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel's stream, whichever way it arrives: LiveSession (RDMA: the server's notifications
// and Reads of its ring) or MulticastLiveSession (UDP multicast, no RDMA device). vod-client,
// rdmasrc and vod-proxy read either through this one interface; open_live() (open_live.hpp) makes
// the right one.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vod/protocol/catalog_layout.hpp"

namespace vod::client {

// What read() delivered.
struct LiveChunk {
  std::size_t bytes = 0;
  std::uint64_t stream_offset = 0;
  bool discontinuity = false;  // reset decoders: a skip, a source restart, a loop, a reconnect, a hole
  bool end_of_stream = false;  // the source stopped after these bytes (it may come back)
  bool finished = false;       // after finish(): the stream was delivered up to a frame boundary
};

class LiveSource {
 public:
  virtual ~LiveSource() = default;
  LiveSource(const LiveSource&) = delete;
  LiveSource& operator=(const LiveSource&) = delete;

  // Waits up to `timeout` for stream bytes and copies at most out.size() of them. A chunk with 0
  // bytes and no flag means the time ran out. Recovers underneath where it can (LiveSession
  // reconnects); throws ClientError when that gives up, Interrupted after interrupt().
  virtual LiveChunk read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) = 0;
  // Ends the stream at the next access-unit start: read() delivers up to it, then a chunk with
  // `finished` (a recording of --duration seconds ends on a whole frame).
  virtual void finish() noexcept = 0;
  // Thread-safe: makes a blocked read() throw Interrupted until clear_interrupt().
  virtual void interrupt() noexcept = 0;
  virtual void clear_interrupt() noexcept = 0;
  // For an event loop: read() with a zero timeout does not wait for the network, and these fds
  // turn readable when there may be more to read. (What has no fd, header polling or a hole
  // timeout, needs a timer beside them.)
  virtual std::vector<int> wait_fds() const = 0;

  // The channel's catalog entry.
  virtual const proto::CatalogEntry& channel() const noexcept = 0;
  // One line for logs: what was delivered, skipped and lost.
  virtual std::string summary() const = 0;

 protected:
  LiveSource() = default;
};

}  // namespace vod::client
