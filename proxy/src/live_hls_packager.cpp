// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_hls_packager.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace vod::proxy {

namespace {

constexpr std::uint64_t kPtsModulo = std::uint64_t{1} << 33;
constexpr double kPtsHz = 90000.0;
constexpr double kLargestFrame = 1.0;  // seconds: a bigger step between neighbouring frames' PTS is a jump, not a frame

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", s);
  return buf;
}

std::string date_time(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

}  // namespace

void LiveHlsPackager::Clock::advance(std::uint64_t pts) {
  pts %= kPtsModulo;
  if (last_pts) {
    // The step to this frame's PTS, either way, over a wrap.
    const std::uint64_t forward = (pts + kPtsModulo - *last_pts) % kPtsModulo;
    const double step = static_cast<double>(std::min(forward, kPtsModulo - forward)) / kPtsHz;
    if (step > 0 && step < kLargestFrame) {
      steps[step_count++ % steps.size()] = step;
      frame_seconds = *std::min_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(std::min(step_count, steps.size())));
    }
  }
  last_pts = pts;
  now += frame_seconds;  // the frame before this one has ended
}

LiveHlsPackager::LiveHlsPackager(LiveHlsSettings settings, std::uint64_t first_msn)
    : settings_(settings),
      next_msn_(first_msn),
      first_msn_made_(first_msn),
      target_duration_(static_cast<unsigned>(std::max(1.0, std::ceil(settings.segment_seconds)))) {}

std::uint64_t LiveHlsPackager::first_msn() const noexcept { return segments_.empty() ? first_msn_made_ : segments_.front().msn; }

bool LiveHlsPackager::holds_back() const noexcept {
  if (segments_.size() > settings_.window_segments) return true;
  double complete = 0;
  for (const auto& s : segments_) complete += s.complete ? s.duration : 0;
  return complete + 0.25 >= 3.0 * target_duration_;  // a frame's rounding short still counts
}

std::size_t LiveHlsPackager::bytes() const noexcept {
  std::size_t n = 0;
  for (const auto& s : segments_) n += s.bytes.size();
  return n;
}

void LiveHlsPackager::begin_segment(std::chrono::system_clock::time_point arrived, bool discontinuity, bool independent) {
  LiveHlsSegment s;
  s.msn = next_msn_++;
  s.discontinuity = discontinuity && s.msn > first_msn_made_;
  s.program_time = arrived;
  segments_.push_back(std::move(s));
  cursor_ = Cursor{};
  // Until a frame with a PTS begins in it, the segment and its first part start now on the clock
  // (a segment finished before any timed frame lasts 0, not the channel's whole time so far).
  cursor_.segment_start = cursor_.part_start = clock_.now;
  cursor_.part_independent = independent;
  // The window: complete segments behind the one being made.
  while (segments_.size() > settings_.window_segments + 1) {
    if (segments_.front().discontinuity) ++discontinuities_dropped_;
    segments_.pop_front();
  }
}

void LiveHlsPackager::finish_part(double end, bool next_independent) {
  LiveHlsSegment& s = current();
  const std::size_t length = s.bytes.size() - cursor_.part_offset;
  if (length > 0) {
    s.parts.push_back({cursor_.part_offset, length, std::max(0.0, end - cursor_.part_start), cursor_.part_independent});
    ++finished_parts_;
  }
  cursor_.part_offset = s.bytes.size();
  cursor_.part_start = end;
  cursor_.part_independent = next_independent;
}

void LiveHlsPackager::finish_segment(double end) {
  finish_part(end, false);
  LiveHlsSegment& s = current();
  s.complete = true;
  s.duration = 0;
  for (const auto& part : s.parts) s.duration += part.duration;
  target_duration_ = std::max(target_duration_, static_cast<unsigned>(std::lround(s.duration)));
}

void LiveHlsPackager::append(const std::uint8_t* data, std::size_t length, std::chrono::system_clock::time_point arrived) {
  if (length == 0) return;
  if (current().bytes.size() + length > settings_.max_segment_bytes && !current().bytes.empty()) {
    // A stream with frames too big or none found: cut here (whole TS packets), to bound the memory.
    finish_segment(clock_.now);
    begin_segment(arrived, false, false);
  }
  current().bytes.append(reinterpret_cast<const char*>(data), length);
}

void LiveHlsPackager::at_frame(const AccessUnitMark& unit, std::chrono::system_clock::time_point arrived) {
  if (!unit.pts_90k) return;  // untimed: not a place to cut
  clock_.advance(*unit.pts_90k);
  const double now = clock_.now;
  if (!cursor_.segment_timed) {
    cursor_.segment_timed = true;
    cursor_.segment_start = now;
  }
  const bool part_empty = current().bytes.size() == cursor_.part_offset;
  if (!cursor_.part_timed || part_empty) {
    cursor_.part_timed = true;
    cursor_.part_start = now;
    if (part_empty && unit.keyframe) cursor_.part_independent = true;
    return;
  }
  const double segment = now - cursor_.segment_start, part = now - cursor_.part_start, frame = clock_.frame_seconds;
  const bool keyframe_due = unit.keyframe && segment + frame / 2 >= settings_.segment_seconds;
  if (keyframe_due || segment >= settings_.segment_seconds * kMaxSegmentFactor) {
    finish_segment(now);
    begin_segment(arrived, false, unit.keyframe);
    cursor_.segment_timed = cursor_.part_timed = true;
    cursor_.segment_start = cursor_.part_start = now;
    return;
  }
  // End the part before the frame that would take it past the part target.
  if (part + frame > settings_.part_seconds + 1e-6) finish_part(now, unit.keyframe);
}

void LiveHlsPackager::feed(const FanoutChunk& chunk, std::chrono::system_clock::time_point arrived, bool discontinuity) {
  const bool new_stream = chunk.stream_start || discontinuity;
  if (!started_) {
    if (!chunk.join_point && !new_stream) return;  // wait for a keyframe to begin at
    started_ = true;
    begin_segment(arrived, false, chunk.join_point);
  } else if (new_stream) {
    if (!current().bytes.empty()) {
      finish_segment(clock_.now + clock_.frame_seconds);
      begin_segment(arrived, true, chunk.join_point);
    } else {
      current().discontinuity = current().msn > first_msn_made_;
    }
    clock_.last_pts.reset();  // the new stream's timestamps start afresh
  }
  std::size_t at = 0;
  for (const AccessUnitMark& unit : chunk.units) {
    if (unit.at < at || unit.at > chunk.bytes.size()) continue;
    append(chunk.bytes.data() + at, unit.at - at, arrived);
    at = unit.at;
    at_frame(unit, arrived);
  }
  append(chunk.bytes.data() + at, chunk.bytes.size() - at, arrived);
}

std::optional<std::string_view> LiveHlsPackager::segment(std::uint64_t msn) const {
  for (const auto& s : segments_)
    if (s.msn == msn && s.complete) return std::string_view(s.bytes);
  return std::nullopt;
}

std::optional<std::string_view> LiveHlsPackager::part(std::uint64_t msn, std::size_t index) const {
  for (const auto& s : segments_)
    if (s.msn == msn && index < s.parts.size()) return std::string_view(s.bytes).substr(s.parts[index].offset, s.parts[index].length);
  return std::nullopt;
}

LiveHlsPosition LiveHlsPackager::next_part() const {
  if (segments_.empty()) return {0, 0};
  return {segments_.back().msn, segments_.back().parts.size()};
}

bool LiveHlsPackager::has(const LiveHlsPosition& p) const {
  if (segments_.empty()) return false;
  const LiveHlsSegment& making = segments_.back();
  if (p.msn < making.msn) return true;
  if (p.msn > making.msn || !p.part) return false;
  return *p.part < making.parts.size();
}

std::string LiveHlsPackager::playlist() const {
  if (!ready()) return {};
  std::string out = "#EXTM3U\n#EXT-X-VERSION:6\n#EXT-X-TARGETDURATION:" + std::to_string(target_duration_) + "\n";
  // A player a part target or two behind the newest part: rfc8216bis asks for at least three.
  out += "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=" + seconds_text(3 * settings_.part_seconds) + "\n";
  out += "#EXT-X-PART-INF:PART-TARGET=" + seconds_text(settings_.part_seconds) + "\n";
  out += "#EXT-X-MEDIA-SEQUENCE:" + std::to_string(first_msn()) + "\n";
  out += "#EXT-X-DISCONTINUITY-SEQUENCE:" + std::to_string(discontinuities_dropped_) + "\n";
  // Parts are listed for the segments within three target durations of the playlist's end
  // (rfc8216bis 4.4.4.9: older ones SHOULD be removed), and always for the one being made.
  std::size_t parts_from = segments_.size() - 1;
  double tail = 0;
  while (parts_from > 0 && tail < 3.0 * target_duration_) tail += segments_[--parts_from].duration;
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const LiveHlsSegment& s = segments_[i];
    if (!s.complete && s.parts.empty()) break;
    if (s.discontinuity) out += "#EXT-X-DISCONTINUITY\n";
    out += "#EXT-X-PROGRAM-DATE-TIME:" + date_time(s.program_time) + "\n";
    if (i >= parts_from) {
      for (std::size_t j = 0; j < s.parts.size(); ++j) {
        out += "#EXT-X-PART:DURATION=" + seconds_text(s.parts[j].duration) + ",URI=\"part-" + std::to_string(s.msn) + "." +
               std::to_string(j) + ".ts\"";
        if (s.parts[j].independent) out += ",INDEPENDENT=YES";
        out += "\n";
      }
    }
    if (s.complete) out += "#EXTINF:" + seconds_text(s.duration) + ",\nseg-" + std::to_string(s.msn) + ".ts\n";
  }
  const LiveHlsPosition hint = next_part();
  out += "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"part-" + std::to_string(hint.msn) + "." + std::to_string(*hint.part) + ".ts\"\n";
  return out;
}

}  // namespace vod::proxy
