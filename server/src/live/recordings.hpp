// SPDX-License-Identifier: LGPL-2.1-or-later
// The event loop's side of --live-record: what the channels' Recorders (on their source threads)
// completed reaches the loop here, through a queue and an eventfd; then --live-record-keep is
// enforced (the oldest recordings go first, each with a log line) and the library is rescanned, so
// the new file is listed as a movie with its index.
//
// At start, before the first scan, a hidden file a kill -9 left behind is completed: cut to whole
// packets and renamed, so the last recording of a crashed server is a movie too.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "live/recorder.hpp"
#include "loop/reactor.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::live {

class Recordings {
 public:
  // `channels`: the names of the channels recorded; `changed` is called in the loop after files
  // were completed or deleted.
  Recordings(loop::Reactor& reactor, RecordOptions options, std::vector<std::string> channels, std::function<void()> changed);
  Recordings(const Recordings&) = delete;
  Recordings& operator=(const Recordings&) = delete;

  // What a Recorder calls, on its thread.
  Recorder::Finished sink();
  const RecordOptions& options() const noexcept { return options_; }

  // Enforces --live-record-keep now; returns the number of files deleted.
  std::size_t enforce_keep();

 private:
  struct File {
    std::filesystem::path path;
    std::uint64_t bytes = 0;
    std::filesystem::file_time_type mtime;
    bool hidden = false;  // being written: counted, never deleted
  };
  std::vector<File> list() const;
  void recover();
  void on_wake();

  loop::Reactor& reactor_;
  RecordOptions options_;
  std::vector<std::string> channels_;
  std::function<void()> changed_;
  UniqueFd wake_fd_;
  loop::Reactor::Registration wake_in_loop_;
  std::mutex mutex_;
  std::vector<FinishedRecording> finished_;  // guarded by mutex_
};

}  // namespace vod::server::live
