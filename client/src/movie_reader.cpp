#include "vod/client/movie_reader.hpp"

#include <algorithm>
#include <thread>

namespace vod::client {

MovieReader::MovieReader(Session& session, PlaybackOptions options) : session_(session), options_(options) {
  if (!session_.has_movie()) throw ClientError(ErrorKind::usage, "a movie reader needs a session opened for a movie");
  restart_clock();
}

std::uint64_t MovieReader::size() const noexcept { return session_.size(); }

double MovieReader::pacing_rate_bps() const {
  if (options_.rate_bps > 0) return options_.rate_bps;
  return static_cast<double>(session_.movie()->bitrate_bps);
}

void MovieReader::restart_clock() noexcept {
  clock_start_ = std::chrono::steady_clock::now();
  clock_origin_ = position_;
}

std::size_t MovieReader::read(std::span<std::uint8_t> out) {
  if (paused_) resume();  // reading is playing
  if (position_ >= size() || out.empty()) return 0;
  std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), size() - position_));
  if (const double rate = options_.paced ? pacing_rate_bps() : 0; rate > 0) {
    // Bytes the player may have by now: a burst, then the bitrate. Wait (driving completions, so
    // read-ahead keeps landing) until this read is due.
    const double burst = options_.burst_seconds * rate / 8;
    const double due_s = (static_cast<double>(position_ - clock_origin_ + want) - burst) * 8 / rate;
    const auto due = clock_start_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(due_s));
    for (auto now = std::chrono::steady_clock::now(); now < due; now = std::chrono::steady_clock::now())
      session_.progress(std::chrono::duration_cast<std::chrono::milliseconds>(due - now) + std::chrono::milliseconds(1));
  }
  const std::size_t got = session_.pread(position_, out.first(want));
  position_ += got;
  return got;
}

void MovieReader::seek(std::uint64_t offset) {
  if (offset > size())
    throw ClientError(ErrorKind::out_of_range, "seek to byte " + std::to_string(offset) + " is past the end of '" + session_.movie()->name +
                                                   "' (" + std::to_string(size()) + " bytes)");
  position_ = offset;
  session_.engine().restart_at(offset);
  restart_clock();
}

std::uint64_t MovieReader::seek_time(std::uint64_t time_us) {
  const proto::CatalogEntry& m = *session_.movie();
  if (m.duration_us > 0 && time_us > m.duration_us)
    throw ClientError(ErrorKind::out_of_range, "seek to " + std::to_string(time_us / 1e6) + " s is past the end of '" + m.name + "' (" +
                                                   std::to_string(m.duration_us / 1e6) + " s)");
  std::uint64_t offset = 0;
  if (const proto::Keyframe* k = session_.index().at_or_before(time_us)) {
    offset = k->offset;
  } else if (m.bitrate_bps > 0) {
    offset = std::min<std::uint64_t>(
        m.size, static_cast<std::uint64_t>(static_cast<double>(time_us) * 1e-6 * static_cast<double>(m.bitrate_bps) / 8));
  } else if (time_us > 0) {
    throw ClientError(ErrorKind::out_of_range, "'" + m.name + "' has no keyframe index and no bitrate: it cannot be seeked by time");
  }
  seek(offset);
  return offset;
}

void MovieReader::pause() noexcept {
  paused_ = true;
  session_.engine().set_readahead(false);  // no Read is posted while paused
}

void MovieReader::resume() noexcept {
  paused_ = false;
  session_.engine().set_readahead(true);
  restart_clock();
}

void MovieReader::switch_movie(const std::string& name) {
  session_.switch_movie(name);
  position_ = 0;
  session_.engine().restart_at(0);
  restart_clock();
}

}  // namespace vod::client
