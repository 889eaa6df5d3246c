// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel's recording (vod-server --live-record): the source's MPEG-TS, byte for byte, as
// files of the media directory, `Live/NAME/NAME YYYY-MM-DD HH.MM.ss.ts` (UTC, the time of the file's
// first byte), which the rescan that follows each file lists as movies.
//
// It runs on the channel's source thread, fed every packet the record cutter takes. Where files
// begin and end is decide_split's (live/record_split.hpp): at a keyframe and the tables before it.
// A file is written under a hidden name (".NAME ....ts", which no scan lists) in whole packets,
// 64 KiB at a time or once the source pauses, up to the access unit still arriving, and renamed
// when it is complete: at --live-record-split, at the end of the stream, and when the server stops
// (without the access unit it was cut in). So a kill -9 leaves a hidden file of whole packets up to
// the last write, which the next start renames (Recordings).
//
// A write that fails (a full disk, a file system gone read-only) loses nothing already written:
// the file so far is completed, recording pauses for kRetryPause with a log line, and the channel
// goes on unaffected. The loss is counted.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "live/record_cutter.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::live {

struct RecordOptions {
  std::filesystem::path media_dir;
  std::chrono::milliseconds split{std::chrono::hours(1)};  // 0: a file per stream
  std::uint64_t keep = 0;                                  // --live-record-keep: bytes of recordings kept; 0: no limit
};

struct FinishedRecording {
  std::string channel;
  std::filesystem::path path;  // its final name
  std::uint64_t bytes = 0;
  std::uint64_t first_us = 0, last_us = 0;  // CLOCK_REALTIME of its first and last packet
};

struct RecorderStats {
  std::uint64_t bytes = 0;    // written to files
  std::uint64_t files = 0;    // completed
  std::uint64_t skipped = 0;  // bytes before a stream's first keyframe, not recorded
  std::uint64_t lost = 0;     // bytes not recorded because of a write error
  std::uint64_t write_errors = 0;
};

inline constexpr std::chrono::seconds kRetryPause{10};

// The folder and the file name stem of `channel`'s recordings, relative to the media directory.
std::filesystem::path recording_folder(const std::string& channel);
std::string recording_stem(const std::string& channel);
// "cam 2026-11-27 20.00.00.ts" for the stem "cam" and that time (µs of CLOCK_REALTIME).
std::string recording_name(const std::string& stem, std::uint64_t time_us);

class Recorder {
 public:
  using Finished = std::function<void(const FinishedRecording&)>;

  // Opens nothing yet: the first file begins at the stream's first keyframe.
  Recorder(std::string channel, RecordOptions options, Finished finished);
  ~Recorder();  // completes the file under way
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

  // One packet as the source sent it, at `now_us` (CLOCK_REALTIME).
  void packet(std::span<const std::uint8_t> packet, const RecordCutter::PacketNote& note, std::uint64_t now_us);
  // The source has no more input at hand: what waits in memory longer than half a second is written.
  void idle(std::uint64_t now_us);
  // The stream ended: the file is completed; the next stream begins another.
  void end_stream(std::uint64_t now_us);

  const RecorderStats& stats() const noexcept { return stats_; }
  // The hidden file being written, if any (what --live-record-keep counts but never deletes).
  const std::optional<std::filesystem::path>& writing() const noexcept { return hidden_; }

 private:
  bool open(std::uint64_t now_us);
  // Writes the first `n` held bytes to the file; false after a failure (handled).
  bool write_out(std::size_t n, std::uint64_t now_us);
  // Where what can be written now ends: before the access unit still arriving, and before a run of
  // tables that may lead into the next file's keyframe.
  std::size_t complete_bytes() const noexcept;
  void complete();
  void failed(const char* call, int error, std::uint64_t now_us);

  std::string channel_;
  RecordOptions options_;
  Finished finished_;
  std::filesystem::path folder_;
  std::string stem_;
  std::vector<std::uint8_t> held_;     // packets not yet written
  std::optional<std::size_t> tables_;  // the run of tables at the end of held_
  std::optional<std::size_t> unit_;    // where the newest access unit in held_ begins (with its tables)
  UniqueFd fd_;                        // the hidden file, while recording
  std::optional<std::filesystem::path> hidden_;
  std::uint64_t written_ = 0;  // bytes of the current file
  std::uint64_t file_first_us_ = 0, last_us_ = 0, held_since_us_ = 0;
  std::uint64_t waiting_since_us_ = 0;  // not recording: since when
  std::uint64_t paused_until_us_ = 0;   // after a write error
  RecorderStats stats_;
};

}  // namespace vod::server::live
