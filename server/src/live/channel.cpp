// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/channel.hpp"

#include <unistd.h>

#include <algorithm>
#include <ctime>

#include "vod/log.hpp"

namespace vod::server::live {

std::uint64_t realtime_us() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

Channel::Channel(std::string name, std::size_t ring_bytes, std::size_t max_record_bytes, int wake_fd)
    : name_(std::move(name)),
      ring_(ring_bytes),
      cutter_(std::min(max_record_bytes, ring_bytes / 4), [this](const Record& r) { publish(r); }),
      wake_fd_(wake_fd) {}

void Channel::set_recorder(std::unique_ptr<Recorder> recorder) {
  recorder_ = std::move(recorder);
  cutter_.set_packet_tap(
      [this](std::span<const std::uint8_t> packet, const RecordCutter::PacketNote& note) { recorder_->packet(packet, note, fed_at_us_); });
}

void Channel::begin_stream(const std::string& why) {
  cutter_.mark_discontinuity();
  ++stream_id_;
  ring_.set_stream(stream_id_, false);
  streaming_ = true;
  {
    std::lock_guard lock(mutex_);
    ++stats_.streams;
  }
  log::info("live", name_ + ": stream " + std::to_string(stream_id_) + " begins (" + why + ")");
}

void Channel::feed(std::span<const std::uint8_t> bytes) {
  if (recorder_) fed_at_us_ = realtime_us();
  cutter_.feed(bytes);
  const std::uint64_t dropped = cutter_.stats().dropped_bytes;
  // Input that is not TS is reported once per megabyte lost, not once per byte.
  if (dropped >= reported_dropped_ + (1u << 20) || (reported_dropped_ == 0 && dropped >= 188 * 7)) {
    log::warn("live", name_ + ": the input is not MPEG-TS here: " + std::to_string(dropped) +
                          " bytes without a 0x47 sync byte every 188 bytes were dropped so far");
    reported_dropped_ = dropped;
  }
}

void Channel::flush() {
  cutter_.flush();
  if (recorder_) recorder_->idle(realtime_us());
}

void Channel::end_stream(const std::string& why) {
  if (!streaming_) return;
  cutter_.flush();
  if (recorder_) recorder_->end_stream(realtime_us());
  streaming_ = false;
  ring_.set_stream(stream_id_, true);
  if (window_) window_->end_stream(stream_id_);
  RecordInfo eos;
  eos.offset = ring_.write_offset();
  eos.flags = proto::kLiveEndOfStream;
  eos.stream_id = stream_id_;
  eos.publish_time_us = realtime_us();
  eos.oldest = ring_.oldest_offset();
  eos.keyframe = ring_.keyframe_offset();
  append(eos, {});
  log::warn("live", name_ + ": stream " + std::to_string(stream_id_) + " ended (" + why + "); viewers are told, the channel stays");
}

void Channel::publish(const Record& r) {
  const std::uint64_t pts_us = r.pts_90k ? *r.pts_90k * 100 / 9 : 0;
  const auto placed = ring_.publish(r.bytes, r.random_access, pts_us);
  RecordInfo info;
  info.offset = placed.offset;
  info.length = static_cast<std::uint32_t>(r.bytes.size());
  info.flags = (r.random_access ? proto::kLiveKeyframe : 0) | (r.unit_start ? proto::kLiveUnitStart : 0) |
               (r.discontinuity ? proto::kLiveDiscontinuity : 0);
  info.stream_id = stream_id_;
  info.pts_us = pts_us;
  info.publish_time_us = realtime_us();
  info.oldest = placed.oldest;
  info.keyframe = placed.keyframe;
  if (window_) window_->append(r.bytes, {info.offset, info.flags, info.stream_id, info.pts_us, info.publish_time_us});
  append(info, r.bytes);
}

void Channel::append(const RecordInfo& record, std::span<const std::uint8_t> bytes) {
  RecordInfo info = record;
  {
    std::lock_guard lock(mutex_);
    info.number = next_number_++;
    log_.push_back(info);
    stats_.bytes += info.length;
    stats_.records += info.length > 0;
    stats_.keyframes += (info.flags & proto::kLiveKeyframe) != 0;
    stats_.dropped_bytes = cutter_.stats().dropped_bytes;
    if (recorder_) stats_.recorder = recorder_->stats();
    if (window_) stats_.dvr_write_errors = window_->write_errors();
  }
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);  // an eventfd: never blocks short of 2^64 - 1 wakes
  if (tap_) tap_(info, bytes);
}

void Channel::drain(std::vector<RecordInfo>& out) {
  std::lock_guard lock(mutex_);
  out.insert(out.end(), log_.begin(), log_.end());
  log_.clear();
}

ChannelStats Channel::stats() const {
  std::lock_guard lock(mutex_);
  ChannelStats s = stats_;
  s.recording = recorder_ != nullptr;
  s.dvr = window_ != nullptr;
  return s;
}

}  // namespace vod::server::live
