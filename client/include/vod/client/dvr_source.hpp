// SPDX-License-Identifier: LGPL-2.1-or-later
// A viewer of a live channel that can be behind live: it reads the channel's DVR window (vod-server
// --live-dvr; vod/protocol/live_window.hpp) through a Session of the window, by one-sided Reads of
// the segment cache (over UDP, by Write-Record ranges), and hands over to the live ring when it
// catches up with the window's whole chunks. The server is asked for nothing per byte: pausing is
// not reading, and rewinding is reading an older offset.
//
//   - It starts at the keyframe mark at or before the wanted publish time (plan_dvr_start).
//   - A viewer the window's oldest edge passes (paused too long) is moved forward to the window's
//     first keyframe, the discontinuity marked and logged: it is never given overwritten bytes (a
//     Read of a chunk that holds a later lap is refused by the lap check; over UDP the window
//     index read after the bytes proves they were still in the window).
//   - At the live edge it reads the ring from where the window left off (LiveOptions::start_offset;
//     over UDP, the multicast group from its newest keyframe, or without a group the window itself
//     as its chunks complete),
//     and if it then falls out of the ring (paused again) it goes back to the window at its own
//     position, without a skip, while the window still holds it.
//   - Through a fleet (rdma+etcd://) the window is placed once and the viewer stays with that member
//     for the window and the ring: another member's window holds other bytes at the same offsets.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "vod/client/live_session.hpp"
#include "vod/client/live_source.hpp"
#include "vod/client/multicast_live_session.hpp"
#include "vod/client/session.hpp"
#include "vod/client/window_reader.hpp"
#include "vod/protocol/live_window.hpp"

namespace vod::client {

// Where a viewer wants to start: `behind` live (vod-client --start -300), or at a wall-clock
// publish time (--start 2026-11-27T20:00:00Z, µs since the epoch).
struct DvrStart {
  std::optional<std::chrono::milliseconds> behind;
  std::optional<std::uint64_t> at_us;
};

// How far before the window's oldest edge a wanted time may be and still start at that edge (the
// window moves while a viewer connects); further is refused.
inline constexpr std::chrono::seconds kDvrStartSlack{15};

struct DvrStartPlan {
  std::uint64_t offset = 0;   // a keyframe mark's
  std::uint64_t time_us = 0;  // its publish time
  bool clamped = false;       // the time wanted was before the window: its oldest keyframe
};

// A pure decider (table-tested): the keyframe mark at or before the wanted time, in `index` whose
// newest record was published at index.header.end_time_us (the live edge). Throws
// ClientError(out_of_range) naming the window's range for a time after the live edge or more than
// kDvrStartSlack before the window, and for a window without a keyframe.
DvrStartPlan plan_dvr_start(const proto::WindowIndex& index, const DvrStart& start);

// "2026-11-27T20:00:00Z" (UTC, seconds, optional fraction) as µs since the epoch; nullopt when the
// text is not such a time.
std::optional<std::uint64_t> parse_utc_time(const std::string& text);

// What a live channel's start reads as (vod-client --start, rdmasrc's dvr-start): "-300" or "-5m"
// behind live, or a UTC time; nullopt for "" or "0", the live edge. Throws ClientError(usage).
std::optional<DvrStart> parse_dvr_start(const std::string& text);

struct DvrStats {
  std::uint64_t window_bytes = 0, live_bytes = 0;
  std::uint64_t moved_forward = 0, moved_bytes = 0;  // times the oldest edge passed the viewer
  std::uint64_t to_live = 0, to_window = 0;          // hand-overs
  std::uint64_t index_reads = 0, index_bytes = 0;    // refreshes of the window index, and the bytes of marks they read
};

class DvrSource final : public LiveSource {
 public:
  // `channel`: rdma://host[:port]/live/NAME. The window is opened as a Session of ".dvr/NAME" with
  // `session`'s options; the ring, at the live edge, with `live` (or by multicast). Throws
  // ClientError: unknown_movie when the channel keeps no window, out_of_range for a start outside it.
  DvrSource(const Uri& channel, const DvrStart& start, SessionOptions session, LiveOptions live,
            std::optional<MulticastLiveOptions> multicast = std::nullopt);
  ~DvrSource() override;

  LiveChunk read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) override;
  void finish() noexcept override;
  void interrupt() noexcept override;
  void clear_interrupt() noexcept override;
  std::vector<int> wait_fds() const override;
  const proto::CatalogEntry& channel() const noexcept override { return channel_; }
  std::string summary() const override;

  // Finish (as finish()) once the position is `d` of publish time past the start: a recording of
  // --duration seconds of the stream, however fast the window is read.
  void stop_after(std::chrono::microseconds d) noexcept { stop_after_ = d; }
  const DvrStats& stats() const noexcept { return stats_; }
  // Where the next byte comes from (a stream offset), and the window as last read.
  std::uint64_t position() const noexcept { return pos_; }
  const proto::WindowIndex& window() const noexcept { return reader_.index(); }
  const DvrStartPlan& started() const noexcept { return plan_; }

 private:
  void refresh();
  const proto::WindowIndex& index() const noexcept { return reader_.index(); }
  // The first mark at or after a stream offset (the marks are in offset order).
  std::vector<proto::WindowMark>::const_iterator mark_from(std::uint64_t offset) const noexcept;
  bool at_mark() const noexcept;  // the position is a mark's
  std::uint64_t complete_end() const noexcept;
  void to_live();
  std::uint64_t time_at(std::uint64_t offset) const noexcept;  // publish time of the newest mark at or before it
  // Bytes from the window at the position, or 0 when it has none there now.
  std::size_t read_window(std::span<std::uint8_t> out, bool& discontinuity);

  Uri uri_;
  LiveOptions live_options_;
  std::optional<MulticastLiveOptions> multicast_;
  Session window_;
  proto::CatalogEntry channel_;
  WindowReader reader_;
  std::chrono::steady_clock::time_point refreshed_{};
  DvrStartPlan plan_;
  std::uint64_t pos_ = 0;
  bool discontinuity_next_ = true;  // the first bytes, and the first after a move
  bool finishing_ = false;
  bool follow_window_ = false;  // over UDP without a multicast group: the window, a chunk behind live
  std::optional<std::chrono::microseconds> stop_after_;
  std::unique_ptr<LiveSource> live_;
  DvrStats stats_;
};

}  // namespace vod::client
