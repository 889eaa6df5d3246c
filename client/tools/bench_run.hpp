// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client bench's run: N simulated viewers in one process (bench_command.cpp sets it up). Threads
// drive the viewers through the asynchronous API, each thread a share of them on its own completion
// queue: each viewer asks for its next chunk `lead` seconds before the player would need it, and a
// chunk is late when its bytes arrive after that moment. After a start or a jump, the player allows
// itself `startup` seconds before the first chunk is due, and the time to the first bytes is the
// seek latency. The run reports its own CPU.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "vod/client/live_session.hpp"
#include "vod/client/session.hpp"
#include "vod/client/stats.hpp"
#include "vod/client/uri.hpp"

namespace vod::client::cli {

using Clock = std::chrono::steady_clock;

// What the command line asks for (parse_bench_options).
struct BenchSettings {
  unsigned clients = 10;
  double duration = 10, rate_mbps = 0, startup = 1.0, lead = 0.5;
  std::string pattern = "sequential";
  unsigned seed = 1;
  double zipf = 0;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  unsigned credits = LiveOptions{}.credits;
  double jump_every = 0;  // jump:S and zap:S
  bool zap = false;       // each period reopens the movie instead of jumping
  std::string uri_text;
  std::string rendition;  // a title: pinned to this rendition
};

// One run: the viewers, spread over groups each driven by its own thread on its own shared CQ (one
// completion channel per thread), so that the bench's own CPU is never what limits a run.
class BenchRun {
 public:
  BenchRun(const BenchSettings& settings, const SessionOptions& options, const Uri& uri, const std::vector<std::string>& movies);
  ~BenchRun();
  BenchRun(const BenchRun&) = delete;
  BenchRun& operator=(const BenchRun&) = delete;
  void run();           // the viewers read until the run's end, on every group's thread
  void report() const;  // the figures, and one BENCH line for the scripts

 private:
  struct Viewer;
  struct Group;
  void open_viewer(Group& g, Viewer& v);
  void restart(Viewer& v, Clock::time_point now, std::uint64_t at);
  // The viewer asks for its next chunk if a player would now; else `next_wake` learns when.
  void ask(Group& g, Viewer& v, Clock::time_point now, Clock::time_point& next_wake);
  void drive(Group& g);

  const BenchSettings& b_;
  std::vector<Group> groups_;
  std::vector<Viewer> viewers_;
  Clock::time_point start_, end_;
};

}  // namespace vod::client::cli
