// Sequential playback of a session's movie with VCR control: pause, resume, seek by byte or by
// time, and switch, none of which sends a message to the server. With pacing, bytes are delivered
// no faster than the movie's bitrate (what a player consumes); without, as fast as RDMA allows.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>

#include "vod/client/session.hpp"

namespace vod::client {

struct PlaybackOptions {
  bool paced = false;
  double rate_bps = 0;         // pacing rate; 0 = the movie's average bitrate from the catalog
  double burst_seconds = 1.0;  // a player's initial buffer: this much is delivered at once after a start or seek
};

class MovieReader {
 public:
  MovieReader(Session& session, PlaybackOptions options = {});

  // Reads up to out.size() bytes at the current position and advances it; 0 at the end. Blocks
  // while pacing holds it back or Reads are outstanding; reconnects underneath when needed.
  // Reading while paused resumes.
  std::size_t read(std::span<std::uint8_t> out);

  // Moves to a byte. Read-ahead and Reads in flight for the old position are discarded.
  // Throws ClientError(out_of_range) past the end.
  void seek(std::uint64_t offset);
  // Moves to the keyframe at or before `time_us` (the index), and returns its byte offset. Without an
  // index, estimates from the bitrate. Throws ClientError(out_of_range) past the duration.
  std::uint64_t seek_time(std::uint64_t time_us);
  void pause() noexcept;
  void resume() noexcept;
  bool paused() const noexcept { return paused_; }
  void switch_movie(const std::string& name);

  std::uint64_t position() const noexcept { return position_; }
  std::uint64_t size() const noexcept;
  double pacing_rate_bps() const;  // may wait for the catalog (the movie's bitrate)

 private:
  void restart_clock() noexcept;

  Session& session_;
  PlaybackOptions options_;
  std::uint64_t position_ = 0;
  bool paused_ = false;
  std::chrono::steady_clock::time_point clock_start_;
  std::uint64_t clock_origin_ = 0;  // position when the pacing clock started
};

}  // namespace vod::client
