// SPDX-License-Identifier: LGPL-2.1-or-later
// Failover's decider (engine/liveness.hpp) as a table, and the read engine's probes of the server's
// status words driven by hand: a probe goes out every probe_every with the other fetches, and a
// dead, hung or draining server throws ConnectionLost; a heartbeat that stopped while nothing waits
// on the server's process does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "engine/liveness.hpp"
#include "manual_fetcher.hpp"
#include "vod/client/errors.hpp"
#include "vod/client/read_engine.hpp"

namespace vod::client {
namespace {

using engine::HeartbeatWatch;
using engine::judge;
using engine::LivenessInputs;
using engine::LivenessPolicy;
using engine::Verdict;
using std::chrono::milliseconds;
using Clock = engine::LivenessClock;

TEST(Liveness, TheDecisionTable) {
  const Clock::time_point t0{};
  const LivenessPolicy policy;  // probes every 250 ms, hung and dead after 1 s, or 4 x the latency
  struct Row {
    const char* what;
    bool outstanding;
    int since_completion_ms;
    int latency_ms;
    bool waits;
    int still_ms;  // how long the heartbeat stood still; -1: never read
    bool draining;
    Verdict expect;
  };
  const Row rows[] = {
      {"all well", true, 100, 5, true, 0, false, Verdict::alive},
      {"idle and quiet for long: nothing outstanding", false, 60000, 5, false, 0, false, Verdict::alive},
      {"a Read outstanding past the deadline", true, 1001, 5, false, 0, false, Verdict::dead},
      {"at the deadline exactly", true, 1000, 5, false, 0, false, Verdict::alive},
      {"a slow link: 4 x 400 ms of latency", true, 1500, 400, false, 0, false, Verdict::alive},
      {"a slow link past its scaled deadline", true, 1601, 400, false, 0, false, Verdict::dead},
      {"heartbeat still, a fault waiting", true, 100, 5, true, 1000, false, Verdict::hung},
      {"heartbeat still, pinned reads only", true, 100, 5, false, 5000, false, Verdict::alive},
      {"heartbeat still not long enough", true, 100, 5, true, 999, false, Verdict::alive},
      {"draining", true, 100, 5, false, 0, true, Verdict::draining},
      {"dead before draining", true, 2000, 5, false, 0, true, Verdict::dead},
      {"hung before draining", true, 100, 5, true, 1500, true, Verdict::hung},
  };
  for (const Row& r : rows) {
    HeartbeatWatch w;
    if (r.still_ms >= 0) {
      w.observe({7, r.draining}, t0, t0 + milliseconds(1));
      w.observe({7, r.draining}, t0 + milliseconds(1 + r.still_ms), t0 + milliseconds(2 + r.still_ms));
    }
    const LivenessInputs in{t0 + milliseconds(10000), r.outstanding, t0 + milliseconds(10000 - r.since_completion_ms),
                            milliseconds(r.latency_ms), r.waits};
    EXPECT_EQ(judge(w, in, policy).verdict, r.expect) << r.what;
  }
}

TEST(Liveness, TheHeartbeatStoodStillOnlyBetweenWhatTheProbesProve) {
  const Clock::time_point t0{};
  HeartbeatWatch w;
  EXPECT_EQ(w.still_for(), milliseconds(0));
  w.observe({5, false}, t0, t0 + milliseconds(300));  // read no earlier than posted, no later than completed
  EXPECT_EQ(w.still_for(), milliseconds(0));
  // The same value, from a probe posted 900 ms later: still from at most 300 to at least 1200.
  w.observe({5, false}, t0 + milliseconds(1200), t0 + milliseconds(1250));
  EXPECT_EQ(w.still_for(), milliseconds(900));
  w.observe({6, false}, t0 + milliseconds(1500), t0 + milliseconds(1510));  // it moved: alive again
  EXPECT_EQ(w.still_for(), milliseconds(0));
  HeartbeatWatch old_server;  // no status words: heartbeat 0 for ever, never hung
  old_server.observe({0, false}, t0, t0);
  old_server.observe({0, false}, t0 + milliseconds(5000), t0 + milliseconds(5000));
  EXPECT_EQ(old_server.still_for(), milliseconds(0));
}

constexpr std::size_t kChunk = 64 * 1024;
constexpr proto::RegionDescriptor kCatalog{0x2000, 4096, 9};
const ReadEngine::ServerWatch kWatch{milliseconds(20), milliseconds(200), milliseconds(200)};

struct Rig {
  ReadEngine engine{test_engine_options(kChunk, 16 * 1024)};
  ManualFetcher* fetcher = nullptr;
  explicit Rig(bool watch = true) {
    if (watch) engine.watch_server(kWatch);
    attach();
  }
  void attach() {
    auto f = std::make_unique<ManualFetcher>(true);
    fetcher = f.get();
    engine.attach(std::move(f));
    engine.set_region(Region::catalog, kCatalog);
  }
  // Waits out the probe interval, lets the engine post its probe, and answers it with `status`.
  void probe(const proto::ServerStatus& status) {
    std::this_thread::sleep_for(kWatch.probe_every + milliseconds(5));
    engine.progress(milliseconds(0));
    ASSERT_EQ(fetcher->pending(), 1u) << "no probe went out";
    const auto f = fetcher->complete_next();
    ASSERT_EQ(f.region, Region::catalog);
    ASSERT_EQ(f.offset, proto::kServerStatusOffset);
    ASSERT_EQ(f.length, proto::kServerStatusLength);
    std::vector<std::uint8_t> header(64);
    proto::write_server_status(header, status);
    std::copy_n(header.begin() + proto::kServerStatusOffset, proto::kServerStatusLength, f.dest);
  }
};

std::string lost_why(ReadEngine& engine) {
  try {
    engine.progress(milliseconds(0));
  } catch (const ConnectionLost& e) {
    return e.what();
  }
  return {};
}

TEST(Liveness, ProbesGoOutOnlyWhenTheServerIsWatched) {
  Rig unwatched(false);
  std::this_thread::sleep_for(kWatch.probe_every * 2);
  unwatched.engine.progress(milliseconds(0));
  EXPECT_EQ(unwatched.fetcher->pending(), 0u);
  Rig watched;
  watched.probe({3, false});
  EXPECT_EQ(lost_why(watched.engine), "");
  watched.probe({4, false});
  EXPECT_EQ(lost_why(watched.engine), "");
}

TEST(Liveness, AHungServerIsLeftOnlyWhenAReadWaitsForIt) {
  Rig rig;
  rig.probe({9, false});
  EXPECT_EQ(lost_why(rig.engine), "");
  std::this_thread::sleep_for(kWatch.hung_after);
  rig.probe({9, false});
  EXPECT_EQ(lost_why(rig.engine), "") << "pinned reads that complete are not abandoned";
  rig.fetcher->server_work = true;  // now a segment fault waits for the stopped process
  EXPECT_NE(lost_why(rig.engine).find("heartbeat stood still"), std::string::npos);
}

TEST(Liveness, ADrainingServerIsLeftAndANewConnectionStartsAfresh) {
  Rig rig;
  rig.probe({1, true});
  EXPECT_NE(lost_why(rig.engine).find("draining"), std::string::npos);
  rig.attach();  // the next member: what the last one said is forgotten
  EXPECT_EQ(lost_why(rig.engine), "");
  rig.probe({1, false});
  EXPECT_EQ(lost_why(rig.engine), "");
}

TEST(Liveness, NothingCompletingIsADeadServer) {
  Rig rig;
  std::this_thread::sleep_for(kWatch.probe_every + milliseconds(5));
  rig.engine.progress(milliseconds(0));
  ASSERT_EQ(rig.fetcher->pending(), 1u);
  std::this_thread::sleep_for(kWatch.dead_after + milliseconds(10));
  EXPECT_NE(lost_why(rig.engine).find("nothing completed"), std::string::npos);
}

TEST(Liveness, AStatusThisClientCannotReadStopsTheWatchNotTheReading) {
  Rig rig;
  std::this_thread::sleep_for(kWatch.probe_every + milliseconds(5));
  rig.engine.progress(milliseconds(0));
  ASSERT_EQ(rig.fetcher->pending(), 1u);
  const auto f = rig.fetcher->complete_next();
  f.dest[4] = 200;  // a state from a later protocol
  EXPECT_EQ(lost_why(rig.engine), "");
  std::this_thread::sleep_for(kWatch.dead_after + milliseconds(10));
  rig.engine.progress(milliseconds(0));
  EXPECT_EQ(rig.fetcher->pending(), 0u) << "probes went on after a status that does not decode";
}

}  // namespace
}  // namespace vod::client
