// SPDX-License-Identifier: LGPL-2.1-or-later
#include "bench_run.hpp"

#include <sys/resource.h>

#include <poll.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "vod/zipf.hpp"

namespace vod::client::cli {

namespace {

// This process's CPU time so far (user + system): so that a run shows the bench never limited it.
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

Clock::duration seconds(double s) { return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)); }

}  // namespace

struct BenchRun::Viewer {
  Uri uri;
  std::unique_ptr<Session> session;
  double rate_bps = 0;
  std::uint64_t size = 0;
  std::uint64_t position = 0;     // next byte to ask for
  std::uint64_t since_start = 0;  // bytes asked for since the last start or jump
  Clock::time_point origin;       // when the player's clock for `since_start` began
  Clock::time_point next_jump;
  bool outstanding = false;
  bool awaiting_first_byte = false;
  bool first_start = true;  // the first byte after connecting: startup, not a seek
  double connect_seconds = 0;
  Clock::time_point seek_started;
  std::vector<std::uint8_t> buffer;
  std::uint64_t in_time = 0, late = 0, bytes = 0, jumps = 0;
};

// A thread's share of the viewers: its own CQ (in options.hub), jump positions and figures.
struct BenchRun::Group {
  SessionOptions options;
  std::vector<Viewer*> viewers;
  std::mt19937_64 random;
  // The steps of each start; startup beyond the rdma_cm connect, per start, is what the issue's
  // goal compares with ib_read_lat.
  LatencySamples connect_us, describe_us, seek_us, startup_us, after_connect_us;  // exact: a few hundred each
};

BenchRun::BenchRun(const BenchSettings& settings, const SessionOptions& options, const Uri& uri, const std::vector<std::string>& movies)
    : b_(settings), groups_(std::clamp(settings.threads, 1u, settings.clients)), viewers_(settings.clients) {
  for (unsigned t = 0; t < groups_.size(); ++t) {
    groups_[t].options = options;
    groups_[t].options.hub = std::make_shared<rdma::CompletionHub>();
    groups_[t].random.seed(b_.seed + t);
  }
  std::mt19937_64 chooser(b_.seed);  // --zipf: which movie each viewer watches
  const auto connect_start = Clock::now();
  for (unsigned i = 0; i < b_.clients; ++i) {
    Viewer& v = viewers_[i];
    Group& g = groups_[i % groups_.size()];
    v.uri = uri;
    v.uri.movie =
        movies[b_.zipf > 0 ? zipf_rank(movies.size(), b_.zipf, std::uniform_real_distribution<double>(0, 1)(chooser)) : i % movies.size()];
    open_viewer(g, v);
    g.viewers.push_back(&v);
    v.size = v.session->size();
    // Without --rate the catalog gives the bitrate (so this waits for it; the start is timed later).
    v.rate_bps = b_.rate_mbps > 0 ? b_.rate_mbps * 1e6 : static_cast<double>(v.session->movie()->bitrate_bps);
    if (v.rate_bps <= 0) throw ClientError(ErrorKind::usage, "'" + *v.uri.movie + "' has no known bitrate: give --rate");
    v.buffer.resize(v.session->engine().chunk_size());
  }
  std::fprintf(stderr, "bench: %u viewers connected in %.2f s over %zu movie(s) and %zu thread(s); pattern %s for %.0f s\n", b_.clients,
               seconds_between(connect_start, Clock::now()), movies.size(), groups_.size(), b_.pattern.c_str(), b_.duration);
}

BenchRun::~BenchRun() = default;

void BenchRun::open_viewer(Group& g, Viewer& v) {
  v.session.reset();  // a zap closes the old connection first, as a player would (not timed)
  const auto connect_at = Clock::now();
  v.session = std::make_unique<Session>(v.uri, g.options);
  v.connect_seconds = seconds_between(connect_at, Clock::now());
  v.first_start = true;
  g.connect_us.record(static_cast<std::uint64_t>(v.session->startup().connect.count()));
  g.describe_us.record(static_cast<std::uint64_t>(v.session->startup().describe.count()));
}

void BenchRun::restart(Viewer& v, Clock::time_point now, std::uint64_t at) {
  v.position = at;
  v.since_start = 0;
  v.origin = now + seconds(b_.startup);
  v.awaiting_first_byte = true;
  v.seek_started = now;
  v.session->engine().restart_at(at);
}

void BenchRun::ask(Group& g, Viewer& v, Clock::time_point now, Clock::time_point& next_wake) {
  if (b_.jump_every > 0 && now >= v.next_jump && !v.outstanding) {
    const std::uint64_t chunk = v.buffer.size();
    const std::uint64_t blocks = std::max<std::uint64_t>(v.size / chunk, 1);
    if (b_.zap) open_viewer(g, v);
    restart(v, b_.zap ? Clock::now() : now, b_.zap ? 0 : (g.random() % blocks) * chunk);
    v.next_jump = now + seconds(b_.jump_every);
    ++v.jumps;
  }
  if (v.outstanding) return;
  // The player needs byte `since_start` at origin + since_start * 8 / rate.
  const auto due = v.origin + seconds(static_cast<double>(v.since_start) * 8 / v.rate_bps);
  const auto ask_at = due - seconds(b_.lead);
  // After a start or a jump the player wants data at once; later chunks are asked for `lead`
  // seconds before they are due.
  if (now < ask_at && !v.awaiting_first_byte) {
    next_wake = std::min(next_wake, ask_at);
    return;
  }
  if (v.position >= v.size) restart(v, now, 0);              // loop the movie
  if (v.awaiting_first_byte) v.seek_started = Clock::now();  // latency runs from the request (after a zap's open)
  v.outstanding = true;
  // After a start or a jump a player asks for what it needs to begin (the first Read's size),
  // then for whole chunks; the seek latency is the time to those first bytes.
  const std::size_t first = g.options.engine.first_read_bytes;
  const std::span<std::uint8_t> want = v.awaiting_first_byte && first > 0 && first < v.buffer.size()
                                           ? std::span<std::uint8_t>(v.buffer.data(), first)
                                           : std::span<std::uint8_t>(v.buffer);
  Viewer* vp = &v;
  v.session->pread_async(v.position, want, [vp, due, &g](std::size_t n) {
    const auto done = Clock::now();
    vp->outstanding = false;
    if (vp->awaiting_first_byte) {
      const auto us = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(done - vp->seek_started).count());
      if (vp->first_start) {  // startup: the open (the connect, posting the first bytes) until they are there
        const auto startup_us = us + static_cast<std::uint64_t>(vp->connect_seconds * 1e6);
        const auto connect_us = static_cast<std::uint64_t>(vp->session->startup().connect.count());
        g.startup_us.record(startup_us);
        g.after_connect_us.record(startup_us - std::min(startup_us, connect_us));
      } else {
        g.seek_us.record(us);
      }
      vp->awaiting_first_byte = vp->first_start = false;
    }
    (done <= due ? vp->in_time : vp->late)++;
    vp->position += n;
    vp->since_start += n;
    vp->bytes += n;
  });
}

void BenchRun::drive(Group& g) {
  // Its viewers ask for chunks when a player would, and their completions are driven from its CQ
  // until the end of the run.
  rdma::CompletionHub& hub = *g.options.hub;
  while (Clock::now() < end_) {
    const auto now = Clock::now();
    auto next_wake = end_;
    for (Viewer* vp : g.viewers) ask(g, *vp, now, next_wake);
    // Drive every connection; wait on the completion channel until the next chunk is due, and at
    // most 5 ms (jumps and disconnects are noticed on these wakes). Arm first, then drive: a
    // completion that lands after the drive still wakes the poll. Waking only for completions,
    // chunks and jumps was tried (issue 14): it cut the bench's CPU with 1000 idle viewers from
    // 9.8 to 6.4 s, but in the Soft-RoCE guest the longer-idle vCPUs made seeks slower (p50 895
    // to 1151 us) and 25 jumping viewers had late chunks, so the tick stays.
    hub.arm();
    for (Viewer* vp : g.viewers) vp->session->progress(std::chrono::milliseconds(0));
    std::vector<pollfd> fds;
    for (int fd : hub.fds()) fds.push_back({fd, POLLIN, 0});
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next_wake - Clock::now());
    if (poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long>(wait.count(), 0, 5))) > 0) hub.consume();
  }
}

void BenchRun::run() {
  start_ = Clock::now();
  end_ = start_ + seconds(b_.duration);
  for (auto& v : viewers_) {
    restart(v, start_, 0);
    v.next_jump = start_ + seconds(b_.jump_every);
  }
  std::vector<std::thread> workers;
  std::vector<std::exception_ptr> failures(groups_.size());
  for (std::size_t t = 1; t < groups_.size(); ++t)
    workers.emplace_back([&, t] {
      try {
        drive(groups_[t]);
      } catch (...) {
        failures[t] = std::current_exception();
      }
    });
  try {
    drive(groups_[0]);
  } catch (...) {
    failures[0] = std::current_exception();
  }
  for (auto& w : workers) w.join();
  for (auto& f : failures)
    if (f) std::rethrow_exception(f);
}

void BenchRun::report() const {
  LatencySamples connect_latency_us, describe_latency_us, seek_latency_us, startup_latency_us, after_connect_latency_us;
  for (const Group& g : groups_) {
    connect_latency_us.merge(g.connect_us);
    describe_latency_us.merge(g.describe_us);
    seek_latency_us.merge(g.seek_us);
    startup_latency_us.merge(g.startup_us);
    after_connect_latency_us.merge(g.after_connect_us);
  }
  const double elapsed = seconds_between(start_, Clock::now());
  Stats total;
  std::uint64_t in_time = 0, late = 0, bytes = 0, jumps = 0;
  unsigned viewers_late = 0;
  for (const auto& v : viewers_) {
    total.merge(v.session->stats());
    in_time += v.in_time;
    late += v.late;
    bytes += v.bytes;
    jumps += v.jumps;
    viewers_late += v.late > 0;
  }
  const unsigned clients = b_.clients;
  using ull = unsigned long long;
  const double goodput = static_cast<double>(bytes) * 8 / elapsed / 1e6;
  std::printf("bench: %u viewers, %.1f s, pattern %s, chunk %zu KiB\n", clients, elapsed, b_.pattern.c_str(),
              viewers_[0].buffer.size() / 1024);
  std::printf("  chunks: %llu in time, %llu late (%.2f%%); viewers with a late chunk: %u of %u\n", static_cast<ull>(in_time),
              static_cast<ull>(late), in_time + late ? 100.0 * static_cast<double>(late) / static_cast<double>(in_time + late) : 0.0,
              viewers_late, clients);
  std::printf("  goodput: %.2f Mbit/s aggregate (%.2f MB/s), %.3f Mbit/s per viewer\n", goodput, goodput / 8, goodput / clients);
  std::printf(
      "  startup (open to first byte): %llu starts, p50 %llu us, p99 %llu us; the rdma_cm connect p50 %llu us, the rest of the"
      " open (posting the first bytes; the catalog and index follow them) p50 %llu us; beyond the connect p50 %llu us\n",
      static_cast<ull>(startup_latency_us.count()), static_cast<ull>(startup_latency_us.percentile(0.5)),
      static_cast<ull>(startup_latency_us.percentile(0.99)), static_cast<ull>(connect_latency_us.percentile(0.5)),
      static_cast<ull>(describe_latency_us.percentile(0.5)), static_cast<ull>(after_connect_latency_us.percentile(0.5)));
  std::printf("  seeks: %llu (%llu jumps), time to first byte p50 %llu us, p90 %llu us, p99 %llu us\n",
              static_cast<ull>(seek_latency_us.count()), static_cast<ull>(jumps), static_cast<ull>(seek_latency_us.percentile(0.5)),
              static_cast<ull>(seek_latency_us.percentile(0.9)), static_cast<ull>(seek_latency_us.percentile(0.99)));
  std::printf("  reads: %s\n", total.summary().c_str());
  // One machine-readable line for the benchmark scripts.
  std::printf(
      "BENCH clients=%u seconds=%.3f in_time=%llu late=%llu viewers_late=%u goodput_mbps=%.3f seek_p50_us=%llu seek_p99_us=%llu "
      "startup_p50_us=%llu startup_p99_us=%llu connect_p50_us=%llu describe_p50_us=%llu after_connect_p50_us=%llu "
      "after_connect_p99_us=%llu read_p50_us=%llu read_p99_us=%llu reconnects=%llu bench_cpu_s=%.3f seeks=%llu\n",
      clients, elapsed, static_cast<ull>(in_time), static_cast<ull>(late), viewers_late, goodput,
      static_cast<ull>(seek_latency_us.percentile(0.5)), static_cast<ull>(seek_latency_us.percentile(0.99)),
      static_cast<ull>(startup_latency_us.percentile(0.5)), static_cast<ull>(startup_latency_us.percentile(0.99)),
      static_cast<ull>(connect_latency_us.percentile(0.5)), static_cast<ull>(describe_latency_us.percentile(0.5)),
      static_cast<ull>(after_connect_latency_us.percentile(0.5)), static_cast<ull>(after_connect_latency_us.percentile(0.99)),
      static_cast<ull>(total.read_latency_us.percentile(0.5)), static_cast<ull>(total.read_latency_us.percentile(0.99)),
      static_cast<ull>(total.reconnects), process_cpu_seconds(), static_cast<ull>(seek_latency_us.count()));
  std::fflush(stdout);  // before the viewers disconnect: the benchmark reads the server's steady state up to here
}

}  // namespace vod::client::cli
