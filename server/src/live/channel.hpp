// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel: its ring and header (LiveRing), the record cutter its source feeds, and the log of
// published records that the event loop drains to notify viewers.
//
// Two threads touch a channel. The source thread (live/sources.cpp) is the only writer of the ring,
// the header and the cutter: begin_stream, feed, flush, end_stream. The event loop only drains the
// record log (under the mutex) and is woken through the eventfd it passed in. Neither waits for
// the other beyond that mutex.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "live/dvr_window.hpp"
#include "live/live_ring.hpp"
#include "live/record_cutter.hpp"
#include "live/recorder.hpp"

namespace vod::server::live {

// What the event loop learns of one published record (or of an end of stream, with length 0).
struct RecordInfo {
  std::uint64_t number = 0;  // 0, 1, 2, ... per channel: the order records were published in
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
  std::uint32_t flags = 0;  // proto::kLiveKeyframe, kLiveUnitStart, kLiveDiscontinuity, kLiveEndOfStream
  std::uint32_t stream_id = 0;
  std::uint64_t pts_us = 0;
  std::uint64_t publish_time_us = 0;  // CLOCK_REALTIME
  std::uint64_t oldest = 0;           // the ring's oldest valid offset after this record
  std::uint64_t keyframe = 0;         // the newest keyframe after this record (kNoKeyframe: none)

  std::uint64_t end() const noexcept { return offset + length; }
};

struct ChannelStats {
  std::uint64_t bytes = 0, records = 0, keyframes = 0, streams = 0, dropped_bytes = 0;
  bool recording = false;
  RecorderStats recorder;  // --live-record
  bool dvr = false;        // --live-dvr, and the window could be made
  std::uint64_t dvr_write_errors = 0;
};

class Channel {
 public:
  // wake_fd: an eventfd the event loop polls; written once per published record.
  Channel(std::string name, std::size_t ring_bytes, std::size_t max_record_bytes, int wake_fd);

  const std::string& name() const noexcept { return name_; }
  const LiveRing& ring() const noexcept { return ring_; }

  // Sees every published record (numbered) and its bytes on the source thread, right after the
  // ring has it: the live multicast sender. Set before the source starts.
  using Tap = std::function<void(const RecordInfo&, std::span<const std::uint8_t>)>;
  void set_tap(Tap tap) { tap_ = std::move(tap); }
  // --live-record: every packet the source sends is recorded too, on the source thread. Set before
  // the source starts.
  void set_recorder(std::unique_ptr<Recorder> recorder);
  // --live-dvr: every record goes into the DVR window too, on the source thread. Set before the
  // source starts; the window outlives the channel's source thread.
  void set_window(DvrWindow* window) { window_ = window; }

  // ---- source thread
  // A new session of the source (it started, resumed or looped): a new stream id, and the next
  // record carries the discontinuity flag.
  void begin_stream(const std::string& why);
  void feed(std::span<const std::uint8_t> bytes);
  void flush();
  // The source stopped (EOF, silence, an error): viewers get an end-of-stream notification.
  void end_stream(const std::string& why);
  bool streaming() const noexcept { return streaming_.load(std::memory_order_relaxed); }
  const RecordCutter& cutter() const noexcept { return cutter_; }

  // ---- event loop
  // Moves the records published since the last call into `out` (appended).
  void drain(std::vector<RecordInfo>& out);
  ChannelStats stats() const;

 private:
  void publish(const Record& r);
  void append(const RecordInfo& info, std::span<const std::uint8_t> bytes);

  std::string name_;
  LiveRing ring_;
  RecordCutter cutter_;
  int wake_fd_;
  std::uint32_t stream_id_ = 0;
  std::atomic<bool> streaming_{false};
  std::uint64_t reported_dropped_ = 0;
  Tap tap_;
  std::unique_ptr<Recorder> recorder_;
  DvrWindow* window_ = nullptr;
  std::uint64_t fed_at_us_ = 0;  // when the bytes being fed arrived (CLOCK_REALTIME)

  mutable std::mutex mutex_;  // guards log_ and stats_
  std::vector<RecordInfo> log_;
  std::uint64_t next_number_ = 0;
  ChannelStats stats_;
};

// Microseconds of CLOCK_REALTIME: the clock notifications are stamped with.
std::uint64_t realtime_us() noexcept;

}  // namespace vod::server::live
