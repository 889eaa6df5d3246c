// SPDX-License-Identifier: LGPL-2.1-or-later
// rdmasrc's live channel with a DVR window (vod-server --live-dvr; vod/client/dvr_source.hpp): the
// window's range for a seeking query, and viewers opened at a publish time for a seek. The element
// seeks in GST_FORMAT_TIME on an axis of publish time, in ns since the Unix epoch (the server's
// clock, as EXT-X-PROGRAM-DATE-TIME in dvr.m3u8): a seeking query answers [the window's oldest
// keyframe, the live edge], which moves as the channel goes on, and a seek to T plays from the
// keyframe at or before T, read one-sided from the window until it catches up with the live ring.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <gst/gst.h>

#include "vod/client/dvr_source.hpp"

namespace vod::gst {

struct WindowRange {
  std::uint64_t oldest_us = 0;  // the window's oldest keyframe's publish time
  std::uint64_t live_us = 0;    // its newest record's: the live edge
};

class LiveDvr {
 public:
  LiveDvr(client::Uri channel, client::SessionOptions session, client::LiveOptions live,
          std::optional<client::MulticastLiveOptions> multicast);
  ~LiveDvr();

  // The window's range now, read from its header (one 128-byte Read); nullopt when the channel keeps
  // no window (asked of the server once, then remembered) or it cannot be read now (logged).
  // Thread-safe: the application's queries come from any thread.
  std::optional<WindowRange> range();
  // A viewer from `start` (the keyframe at or before it). Throws ClientError: out_of_range naming
  // the window's range for a start outside it, unknown_movie for a channel without a window.
  std::unique_ptr<client::DvrSource> open(const client::DvrStart& start);

  // GstBaseSrc's vfuncs, for a live channel. A seeking query in TIME: the window's range (not
  // seekable without one); in any other format: not seekable. Returns true (answered).
  bool answer_seeking(GstQuery* query);
  // prepare_seek_segment: a TIME seek (SET, rate 1) opens a viewer at its start, kept until
  // take_seeked(), and configures `segment` (BYTES) from its stream offset. False, with a warning
  // on the bus naming the window's range, for a seek outside the window or of another kind: the
  // pipeline goes on where it was.
  bool prepare_seek(GstElement* element, GstEvent* seek, GstSegment* segment);
  // do_seek (the streaming thread stopped): the viewer the last seek opened, or nullptr.
  std::unique_ptr<client::LiveSource> take_seeked();
  // An element message "rdmasrc-dvr" for a viewer that starts behind live: its start's publish time
  // and the live edge (µs since the epoch), and how far behind it is, for a player's scrub bar.
  static GstMessage* started_message(GstElement* element, const client::DvrSource& viewer);

 private:
  client::Uri channel_;
  client::SessionOptions session_options_;
  client::LiveOptions live_;
  std::optional<client::MulticastLiveOptions> multicast_;
  std::mutex mutex_;
  std::unique_ptr<client::Session> header_;  // opened at the first range(), for the header alone
  bool absent_ = false;
  std::unique_ptr<client::DvrSource> seeked_;
};

}  // namespace vod::gst
