// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/dvr_source.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <thread>

#include "vod/client/open_live.hpp"
#include "vod/log.hpp"
#include "vod/units.hpp"

namespace vod::client {

namespace {
constexpr auto kRefreshEvery = std::chrono::seconds(2);
constexpr std::size_t kMaxRead = 1u << 20;

std::string utc(std::uint64_t us) {
  const std::time_t t = static_cast<std::time_t>(us / 1'000'000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string seconds(std::uint64_t us) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f s", static_cast<double>(us) / 1e6);
  return text;
}

// A fleet (rdma+etcd://): the member that serves the channel's window, placed once. A window's
// stream offsets and its ring's are its member's own (another member's window holds other bytes at
// them), so the viewer stays with that member: its window session and the ring it hands over to
// name the member, not the fleet, and bytes of two members' windows are never delivered as one.
Uri pinned_to_member(const Uri& channel, const SessionOptions& options) {
  if (!channel.cluster) return channel;
  const Session placed(window_uri(channel), options);
  Uri u = channel;
  u.host = placed.uri().host;
  u.port = placed.uri().port;
  u.cluster.reset();
  log::info("client", "live/" + channel.movie.value_or("") + ": its DVR window on member " + placed.server() +
                          ", which this viewer stays with (another member's window holds other bytes)");
  return u;
}

}  // namespace

std::optional<DvrStart> parse_dvr_start(const std::string& text) {
  if (text.empty() || text == "0") return std::nullopt;
  DvrStart d;
  if (text[0] == '-') {
    try {
      d.behind = parse_duration(text.substr(1), "start");
    } catch (const std::invalid_argument& e) {
      throw ClientError(ErrorKind::usage, e.what());
    }
    if (d.behind->count() == 0) return std::nullopt;
    return d;
  }
  d.at_us = parse_utc_time(text);
  if (!d.at_us)
    throw ClientError(ErrorKind::usage, "start '" + text +
                                            "': a live channel starts -SECONDS behind live (e.g. -300, -5m) or at a UTC time "
                                            "(e.g. 2026-11-27T20:00:00Z)");
  return d;
}

std::optional<std::uint64_t> parse_utc_time(const std::string& text) {
  std::tm tm{};
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, used = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute, &second, &used) != 6) return std::nullopt;
  std::string rest = text.substr(static_cast<std::size_t>(used));
  double fraction = 0;
  if (!rest.empty() && rest[0] == '.') {
    std::size_t n = 1;
    while (n < rest.size() && rest[n] >= '0' && rest[n] <= '9') ++n;
    if (n == 1) return std::nullopt;
    fraction = std::stod("0" + rest.substr(0, n));
    rest = rest.substr(n);
  }
  if (rest != "Z" || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60 || year < 1970)
    return std::nullopt;
  tm.tm_year = year - 1900;
  tm.tm_mon = month - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  const std::time_t t = timegm(&tm);
  if (t < 0) return std::nullopt;
  return static_cast<std::uint64_t>(t) * 1'000'000 + static_cast<std::uint64_t>(std::llround(fraction * 1e6));
}

DvrStartPlan plan_dvr_start(const proto::WindowIndex& index, const DvrStart& start) {
  const auto& h = index.header;
  std::uint64_t want = h.end_time_us;
  if (start.at_us) want = *start.at_us;
  else if (start.behind)
    want = h.end_time_us - std::min<std::uint64_t>(h.end_time_us, static_cast<std::uint64_t>(start.behind->count()) * 1000);
  const auto first =
      std::find_if(index.marks.begin(), index.marks.end(), [](const auto& m) { return m.flags & proto::kWindowMarkKeyframe; });
  const std::string range = first == index.marks.end()
                                ? std::string("the window holds no keyframe yet")
                                : "the window holds " + utc(first->publish_time_us) + " to " + utc(h.end_time_us) + " (" +
                                      seconds(h.end_time_us - first->publish_time_us) + " behind live at most)";
  if (first == index.marks.end()) throw ClientError(ErrorKind::out_of_range, range);
  if (want > h.end_time_us) throw ClientError(ErrorKind::out_of_range, "the start " + utc(want) + " is after the live edge: " + range);
  const std::uint64_t slack = static_cast<std::uint64_t>(std::chrono::microseconds(kDvrStartSlack).count());
  if (want + slack < first->publish_time_us)
    throw ClientError(ErrorKind::out_of_range, "the start " + utc(want) + " is before the window: " + range);
  const auto mark = proto::keyframe_at_or_before(index, want);
  return {mark->offset, mark->publish_time_us, want < first->publish_time_us};
}

DvrSource::DvrSource(const Uri& channel, const DvrStart& start, SessionOptions session, LiveOptions live,
                     std::optional<MulticastLiveOptions> multicast)
    : uri_(pinned_to_member(channel, session)),
      live_options_(std::move(live)),
      multicast_(std::move(multicast)),
      window_(window_uri(uri_), session),
      reader_(channel.movie.value_or("")) {
  const auto& catalog = window_.catalog();
  const auto it = std::find_if(catalog.entries.begin(), catalog.entries.end(),
                               [&](const proto::CatalogEntry& e) { return (e.flags & proto::kEntryLive) && e.name == uri_.movie; });
  if (it == catalog.entries.end())
    throw ClientError(ErrorKind::unknown_movie,
                      "'" + uri_.movie.value_or("") + "' has a DVR window but is not a live channel of " + window_.server());
  channel_ = *it;
  if (multicast_ && multicast_->group.empty()) multicast_.reset();
  follow_window_ = window_.options().transport == Transport::udp && !multicast_;
  refresh();
  plan_ = plan_dvr_start(index(), start);
  pos_ = plan_.offset;
  const std::uint64_t behind = index().header.end_time_us - plan_.time_us;
  log::info("client", "live/" + uri_.movie.value_or("") + ": starting " + seconds(behind) + " behind live, at the keyframe of " +
                          utc(plan_.time_us) + " (stream offset " + std::to_string(pos_) + ")" +
                          (plan_.clamped ? "; the time asked is before the window, which begins there" : ""));
}

DvrSource::~DvrSource() = default;

void DvrSource::refresh() {
  reader_.refresh(window_);
  stats_.index_reads = reader_.reads();
  stats_.index_bytes = reader_.mark_bytes_read();
  refreshed_ = std::chrono::steady_clock::now();
}

std::uint64_t DvrSource::complete_end() const noexcept {
  const std::uint64_t s = index().header.segment_size;
  return index().header.end_offset / s * s;  // the chunk being written is read from the ring
}

void DvrSource::to_live() {
  // The window's engine reads nothing ahead while the ring is read: the window moves on meanwhile,
  // and a read ahead into what it overwrote would only be refused.
  window_.engine().set_readahead(false);
  LiveOptions o = live_options_;
  o.start_offset = pos_;
  ++stats_.to_live;
  log::info("client", "live/" + uri_.movie.value_or("") + ": caught up with the window at stream offset " + std::to_string(pos_) +
                          "; reading the live ring from there");
  live_ = open_live(uri_, o, multicast_);
}

std::size_t DvrSource::read_window(std::span<std::uint8_t> out, bool& discontinuity) {
  if (pos_ < index().header.oldest_offset) {
    const std::uint64_t moved = index().header.oldest_offset - pos_;
    ++stats_.moved_forward;
    stats_.moved_bytes += moved;
    log::warn("client", "live/" + uri_.movie.value_or("") +
                            ": the window's oldest edge passed this viewer (paused too long): moved forward " + std::to_string(moved) +
                            " bytes to its first keyframe, of " + utc(index().header.oldest_time_us));
    pos_ = index().header.oldest_offset;
    discontinuity_next_ = true;
  }
  const std::uint64_t s = index().header.segment_size;
  std::uint64_t until = std::min({complete_end(), (pos_ / s + 1) * s, pos_ + std::min<std::uint64_t>(out.size(), kMaxRead)});
  // A new stream begins a delivery of its own; a finish ends on a keyframe.
  const auto& marks = index().marks;
  const auto at = mark_from(pos_);
  if (at != marks.end() && at->offset == pos_ && (at->flags & proto::kWindowMarkDiscontinuity)) discontinuity = true;
  const auto next = at != marks.end() && at->offset == pos_ ? at + 1 : at;
  if (next != marks.end() && ((next->flags & proto::kWindowMarkDiscontinuity) || finishing_ || stop_after_))
    until = std::min(until, next->offset);
  if (until <= pos_) return 0;
  window_.engine().set_readahead_limit(complete_end());
  window_.engine().set_readahead(true);
  // Over RDMA the segment reader checks each chunk's lap; over UDP the server does, by the stream
  // offsets the ranges name. Either refuses bytes the window no longer holds (ClientError out_of_range).
  return window_.pread(pos_, out.first(static_cast<std::size_t>(until - pos_)));
}

std::uint64_t DvrSource::time_at(std::uint64_t offset) const noexcept {
  const auto& marks = index().marks;
  std::uint64_t t = plan_.time_us;
  const auto after = mark_from(offset + 1);  // past the newest mark at or before the offset
  if (after != marks.begin()) t = std::max(t, std::prev(after)->publish_time_us);
  if (!marks.empty() && offset >= index().header.end_offset) t = std::max(t, index().header.end_time_us);
  return t;
}

std::vector<proto::WindowMark>::const_iterator DvrSource::mark_from(std::uint64_t offset) const noexcept {
  const auto& marks = index().marks;
  return std::lower_bound(marks.begin(), marks.end(), offset, [](const proto::WindowMark& m, std::uint64_t o) { return m.offset < o; });
}

bool DvrSource::at_mark() const noexcept {
  const auto at = mark_from(pos_);
  return at != index().marks.end() && at->offset == pos_;
}

LiveChunk DvrSource::read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) {
  if (stop_after_ && !finishing_ && time_at(pos_) >= plan_.time_us + static_cast<std::uint64_t>(stop_after_->count())) finish();
  for (int round = 0; round < 64; ++round) {
    if (live_) {
      // A --duration of stream time is counted by the window's marks, which the ring's bytes
      // pass too: they are read again now and then.
      if (stop_after_ && std::chrono::steady_clock::now() - refreshed_ > kRefreshEvery) {
        refresh();
        if (!finishing_ && time_at(pos_) >= plan_.time_us + static_cast<std::uint64_t>(stop_after_->count())) finish();
      }
      LiveChunk c = live_->read(out, timeout);
      if (c.bytes && c.stream_offset != pos_) {
        // The ring skipped ahead (a pause longer than the ring): back to the window at the position,
        // or, when the window lost it too, at the window's oldest keyframe (read_window says so).
        refresh();
        if (pos_ < complete_end()) {
          ++stats_.to_window;
          log::info("client", "live/" + uri_.movie.value_or("") +
                                  ": fell out of the live ring; reading the window again at stream offset " +
                                  std::to_string(std::max(pos_, index().header.oldest_offset)));
          live_.reset();
          continue;
        }
      }
      if (c.bytes) {
        pos_ = c.stream_offset + c.bytes;
        stats_.live_bytes += c.bytes;
      }
      return c;
    }
    if (std::chrono::steady_clock::now() - refreshed_ > kRefreshEvery || pos_ >= complete_end()) refresh();
    if (stop_after_ && !finishing_ && time_at(pos_) >= plan_.time_us + static_cast<std::uint64_t>(stop_after_->count())) finish();
    if (finishing_ && pos_ != plan_.offset && at_mark()) return {0, pos_, false, false, true};
    if (pos_ >= complete_end()) {
      if (!follow_window_) {
        to_live();
        continue;
      }
      // Over UDP without a multicast group there is no live edge to join: the window is followed
      // as its chunks complete, a chunk behind live.
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(timeout, std::chrono::milliseconds(250)));
      refresh();
      if (pos_ >= complete_end()) return {0, pos_};
      continue;
    }
    bool discontinuity = false;
    std::size_t got = 0;
    try {
      got = read_window(out, discontinuity);
    } catch (const ClientError& e) {
      if (e.kind() != ErrorKind::out_of_range) throw;
      log::info("client", "live/" + uri_.movie.value_or("") + ": " + e.what());
      refresh();  // overwritten meanwhile: the next round moves forward
      continue;
    }
    if (got == 0) continue;
    LiveChunk c{got, pos_, discontinuity || std::exchange(discontinuity_next_, false), false};
    pos_ += got;
    stats_.window_bytes += got;
    return c;
  }
  return {0, pos_};
}

void DvrSource::finish() noexcept {
  finishing_ = true;
  if (live_) live_->finish();
}

void DvrSource::interrupt() noexcept {
  window_.interrupt();
  if (live_) live_->interrupt();
}

void DvrSource::clear_interrupt() noexcept {
  window_.clear_interrupt();
  if (live_) live_->clear_interrupt();
}

std::vector<int> DvrSource::wait_fds() const { return live_ ? live_->wait_fds() : window_.wait_fds(); }

std::string DvrSource::summary() const {
  std::string s = "DVR: " + std::to_string(stats_.window_bytes) + " bytes from the window, " + std::to_string(stats_.live_bytes) +
                  " from the live ring; " + std::to_string(stats_.to_live) + " hand-overs to live, " + std::to_string(stats_.to_window) +
                  " back to the window, moved forward by its oldest edge " + std::to_string(stats_.moved_forward) + " times (" +
                  std::to_string(stats_.moved_bytes) + " bytes); the window index read " + std::to_string(stats_.index_reads) + " times (" +
                  std::to_string(stats_.index_bytes) + " bytes of keyframe marks)";
  if (live_) s += "; " + live_->summary();
  return s;
}

}  // namespace vod::client
