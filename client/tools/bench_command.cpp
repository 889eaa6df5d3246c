// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client bench: N simulated viewers in one process, each on its own connection, each reading at
// its movie's bitrate (or --rate) like a player with a small buffer, sequentially or jumping to a
// random position every few seconds, or closing and reopening its movie every few seconds (zap:
// startup, measured many times in one warm process, as a player opening movie after movie).
// Reports chunks in time vs late, goodput, seek latency and startup.
//
// Threads (one per core by default) drive the viewers through the asynchronous API, each thread a
// share of them on its own completion queue: each viewer asks for its next chunk `lead` seconds
// before the player would need it, and a chunk is late when its bytes arrive after that moment.
// After a start or a jump, the player allows itself `startup` seconds before the first chunk is
// due, and the time to the first bytes is the seek latency. The bench reports its own CPU.
#include <sys/resource.h>

#include <poll.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "progress_bar.hpp"
#include "vod/zipf.hpp"
#include "vod/client/live_session.hpp"
#include "vod/log.hpp"

namespace vod::client::cli {

namespace {
// This process's CPU time so far (user + system): so that a run shows the bench never limited it.
double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The bytes the viewers' rings may take together: 3/4 of MemAvailable (the rest is the process,
// the kernel and, with Soft-RoCE, the emulated NIC's copies), and no more than RLIMIT_MEMLOCK
// allows to be pinned. Read from /proc/meminfo by hand: one number, no library for that.
std::uint64_t ring_memory_budget() {
  std::uint64_t available_kib = 0;
  if (std::FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f))
      if (std::sscanf(line, "MemAvailable: %lu kB", &available_kib) == 1) break;
    std::fclose(f);
  }
  std::uint64_t budget = available_kib ? available_kib * 1024 / 4 * 3 : ~std::uint64_t{0};
  rlimit lock{};
  if (getrlimit(RLIMIT_MEMLOCK, &lock) == 0 && lock.rlim_cur != RLIM_INFINITY) budget = std::min<std::uint64_t>(budget, lock.rlim_cur);
  return budget;
}
}  // namespace

namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

struct Viewer {
  Uri uri;
  std::unique_ptr<Session> session;
  double rate_bps = 0;
  std::uint64_t size = 0;
  std::uint64_t position = 0;   // next byte to ask for
  std::uint64_t since_start = 0;  // bytes asked for since the last start or jump
  Clock::time_point origin;     // when the player's clock for `since_start` began
  Clock::time_point next_jump;
  bool outstanding = false;
  bool awaiting_first_byte = false;
  bool first_start = true;              // the first byte after connecting: startup, not a seek
  double connect_seconds = 0;
  Clock::time_point seek_started;
  std::vector<std::uint8_t> buffer;
  std::uint64_t in_time = 0, late = 0, bytes = 0, jumps = 0;
};

// A thread's share of the viewers: its own CQ (in options.hub), jump positions and figures.
struct Group {
  SessionOptions options;
  std::vector<Viewer*> viewers;
  std::mt19937_64 random;
  // The steps of each start; startup beyond the rdma_cm connect, per start, is what the issue's
  // goal compares with ib_read_lat.
  LatencySamples connect_us, describe_us, seek_us, startup_us, after_connect_us;  // exact: a few hundred each
};

}  // namespace

int run_bench(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  CommonOptions common;
  unsigned clients = 10;
  double duration = 10, rate_mbps = 0, startup = 1.0, lead = 0.5;
  std::string pattern = "sequential";
  unsigned seed = 1;
  double zipf = 0;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  po::options_description opts("bench");
  opts.add_options()("clients", po::value(&clients)->default_value(clients), "simulated viewers, one connection each")(
      "duration", po::value(&duration)->default_value(duration), "seconds to run (bounded)")(
      "pattern", po::value(&pattern)->default_value(pattern), "sequential, jump:SECONDS (a random position every SECONDS) or zap:SECONDS (reopen the movie every SECONDS)")(
      "rate", po::value(&rate_mbps)->default_value(0), "Mbit/s per viewer; 0 = each movie's bitrate")(
      "startup", po::value(&startup)->default_value(startup), "seconds a player allows before its first chunk is due, after a start or jump")(
      "lead", po::value(&lead)->default_value(lead), "seconds ahead of need a viewer asks for its next chunk")(
      "seed", po::value(&seed)->default_value(seed), "random seed for jump positions (and --zipf choices)")(
      "zipf", po::value(&zipf)->default_value(zipf), "with the catalog's movies (no NAME): each viewer picks one by Zipf's law with this exponent "
                                                    "(the catalog's first movie the most popular); 0: in turn")(
      "threads", po::value(&threads)->default_value(threads), "threads driving the viewers, each on its own completion queue (at most one per viewer)");
  unsigned credits = LiveOptions{}.credits;
  opts.add_options()("credits", po::value(&credits)->default_value(credits), "--pattern live: notifications each viewer lets the server send ahead");
  opts.add(common_options(common));
  std::string uri_text;
  po::variables_map vm;
  const std::string usage = "vod-client bench rdma://host[:port][/NAME] --clients N --duration S --pattern sequential|jump:S|zap:S [--rate MBPS]\n"
                            "       vod-client bench rdma://host[:port]/live/NAME --clients N --duration S --pattern live";
  if (!parse(args, opts, usage, uri_text, vm)) return exit_ok;
  apply(common);
  double jump_every = 0;
  bool zap = false;  // each period reopens the movie instead of jumping
  if (pattern == "live") {
    if (clients == 0 || duration <= 0 || duration > 3600) throw ClientError(ErrorKind::usage, "--clients must be > 0 and --duration in (0, 3600]");
    const Uri uri = command_uri(uri_text, common);
    if (!uri.live) throw ClientError(ErrorKind::usage, "--pattern live needs a live channel: rdma://host[:port]/live/NAME");
    return bench_live(uri, clients, duration, common, credits);
  }
  if (pattern.rfind("jump:", 0) == 0 || pattern.rfind("zap:", 0) == 0) {
    zap = pattern[0] == 'z';
    jump_every = std::atof(pattern.c_str() + pattern.find(':') + 1);
    if (jump_every <= 0) throw ClientError(ErrorKind::usage, "--pattern " + pattern.substr(0, pattern.find(':')) + ":SECONDS needs a positive number of seconds");
  } else if (pattern != "sequential") {
    throw ClientError(ErrorKind::usage, "--pattern must be sequential, jump:SECONDS, zap:SECONDS or live");
  }
  if (clients == 0 || duration <= 0 || duration > 3600) throw ClientError(ErrorKind::usage, "--clients must be > 0 and --duration in (0, 3600]");
  const Uri uri = command_uri(uri_text, common);

  // Which movies: the URI's, or the catalog's, spread over the viewers.
  std::vector<std::string> movies;
  if (uri.movie) {
    movies.push_back(*uri.movie);
  } else {
    Uri catalog_uri = uri;  // the same server and token, no movie
    catalog_uri.movie.reset();
    Session catalog(catalog_uri, common.session);
    // Viewers play media; raw files have no bitrate to pace at unless --rate gives one.
    for (const auto& e : catalog.catalog().entries)
      if (e.size > 0 && (e.bitrate_bps > 0 || rate_mbps > 0)) movies.push_back(e.name);
    if (movies.empty())
      throw ClientError(ErrorKind::unknown_movie, "the catalog of " + catalog.server() + " has no movie with a known bitrate to play (give --rate)");
  }

  // Every viewer registers a ring of its own: fit them to the memory this machine has (and may
  // lock), or refuse now, saying how much is needed, rather than be killed by the OOM killer later.
  {
    const EngineOptions asked = common.session.engine;
    const std::uint64_t budget = ring_memory_budget();
    const auto fitted = fit_rings(asked, clients, budget);
    const double mib = 1 << 20;
    if (!fitted) {
      EngineOptions least = asked;
      least.readahead_bytes = least.chunk_size;  // the least fit_rings tries
      least.read_depth = 2;
      throw ClientError(ErrorKind::usage, std::to_string(clients) + " viewers need at least " +
                                              std::to_string(static_cast<long>(ring_bytes_for(least) * static_cast<double>(clients) / mib)) +
                                              " MiB of registered rings, and this machine has " + std::to_string(static_cast<long>(budget / mib)) +
                                              " MiB for them (3/4 of MemAvailable, within RLIMIT_MEMLOCK): use fewer --clients or a smaller --chunk-kib");
    }
    if (fitted->readahead_bytes != asked.readahead_bytes || fitted->read_depth != asked.read_depth) {
      std::fprintf(stderr, "bench: %u viewers' rings of %.1f MiB each (%.0f MiB) exceed the %.0f MiB this machine has for them; "
                           "using %.1f MiB each: read-ahead %.1f MiB, read depth %u\n",
                   clients, static_cast<double>(ring_bytes_for(asked)) / mib, static_cast<double>(ring_bytes_for(asked)) * clients / mib,
                   static_cast<double>(budget) / mib, static_cast<double>(ring_bytes_for(*fitted)) / mib,
                   static_cast<double>(fitted->readahead_bytes) / mib, fitted->read_depth);
      common.session.engine = *fitted;
    }
  }

  // Every viewer's connection completes on one shared CQ: one fd to sleep on, one poll for all.
  // Each connection still has its rdma_cm event channel (an fd): allow as many as the hard limit.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  // Viewers are spread over `threads` groups, each driven by its own thread on its own shared CQ
  // (one completion channel per thread), so that the bench's own CPU is never what limits a run.
  threads = std::clamp(threads, 1u, clients);
  std::vector<Group> groups(threads);
  for (unsigned t = 0; t < threads; ++t) {
    groups[t].options = common.session;
    groups[t].options.hub = std::make_shared<rdma::CompletionHub>();
    groups[t].random.seed(seed + t);
  }
  std::vector<Viewer> viewers(clients);
  auto open_viewer = [](Group& g, Viewer& v) {
    v.session.reset();  // a zap closes the old connection first, as a player would (not timed)
    const auto connect_at = Clock::now();
    v.session = std::make_unique<Session>(v.uri, g.options);
    v.connect_seconds = seconds_between(connect_at, Clock::now());
    v.first_start = true;
    g.connect_us.record(static_cast<std::uint64_t>(v.session->startup().connect.count()));
    g.describe_us.record(static_cast<std::uint64_t>(v.session->startup().describe.count()));
  };
  std::mt19937_64 chooser(seed);  // --zipf: which movie each viewer watches
  const auto connect_start = Clock::now();
  for (unsigned i = 0; i < clients; ++i) {
    Viewer& v = viewers[i];
    Group& g = groups[i % threads];
    v.uri = uri;
    v.uri.movie = movies[zipf > 0 ? zipf_rank(movies.size(), zipf, std::uniform_real_distribution<double>(0, 1)(chooser)) : i % movies.size()];
    open_viewer(g, v);
    g.viewers.push_back(&v);
    v.size = v.session->size();
    // Without --rate the catalog gives the bitrate (so this waits for it; the start is timed later).
    v.rate_bps = rate_mbps > 0 ? rate_mbps * 1e6 : static_cast<double>(v.session->movie()->bitrate_bps);
    if (v.rate_bps <= 0) throw ClientError(ErrorKind::usage, "'" + *v.uri.movie + "' has no known bitrate: give --rate");
    v.buffer.resize(v.session->engine().chunk_size());
  }
  std::fprintf(stderr, "bench: %u viewers connected in %.2f s over %zu movie(s) and %u thread(s); pattern %s for %.0f s\n", clients,
               seconds_between(connect_start, Clock::now()), movies.size(), threads, pattern.c_str(), duration);

  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration));
  auto restart = [&](Viewer& v, Clock::time_point now, std::uint64_t at) {
    v.position = at;
    v.since_start = 0;
    v.origin = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(startup));
    v.awaiting_first_byte = true;
    v.seek_started = now;
    v.session->engine().restart_at(at);
  };
  for (auto& v : viewers) {
    restart(v, start, 0);
    v.next_jump = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(jump_every));
  }

  // One group's loop: its viewers ask for chunks when a player would, and their completions are
  // driven from its CQ until the end of the run.
  auto drive = [&](Group& g) {
    rdma::CompletionHub& hub = *g.options.hub;
    while (Clock::now() < end) {
      const auto now = Clock::now();
      auto next_wake = end;
      for (Viewer* vp : g.viewers) {
        Viewer& v = *vp;
        if (jump_every > 0 && now >= v.next_jump && !v.outstanding) {
          const std::uint64_t chunk = v.buffer.size();
          const std::uint64_t blocks = std::max<std::uint64_t>(v.size / chunk, 1);
          if (zap) open_viewer(g, v);
          restart(v, zap ? Clock::now() : now, zap ? 0 : (g.random() % blocks) * chunk);
          v.next_jump = now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(jump_every));
          ++v.jumps;
        }
        if (v.outstanding) continue;
        // The player needs byte `since_start` at origin + since_start * 8 / rate.
        const auto due = v.origin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(static_cast<double>(v.since_start) * 8 / v.rate_bps));
        const auto ask_at = due - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(lead));
        // After a start or a jump the player wants data at once; later chunks are asked for `lead`
        // seconds before they are due.
        if (now < ask_at && !v.awaiting_first_byte) {
          next_wake = std::min(next_wake, ask_at);
          continue;
        }
        if (v.position >= v.size) restart(v, now, 0);  // loop the movie
        if (v.awaiting_first_byte) v.seek_started = Clock::now();  // latency runs from the request (after a zap's open)
        v.outstanding = true;
        // After a start or a jump a player asks for what it needs to begin (the first Read's size),
        // then for whole chunks; the seek latency is the time to those first bytes.
        const std::size_t first = g.options.engine.first_read_bytes;
        const std::span<std::uint8_t> want = v.awaiting_first_byte && first > 0 && first < v.buffer.size()
                                                 ? std::span<std::uint8_t>(v.buffer.data(), first)
                                                 : std::span<std::uint8_t>(v.buffer);
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
      // Drive every connection; wait on the completion channel until the next chunk is due, and
      // at most 5 ms (jumps and disconnects are noticed on these wakes). Arm first, then drive: a
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
  };
  std::vector<std::thread> workers;
  std::vector<std::exception_ptr> failures(threads);
  for (unsigned t = 1; t < threads; ++t)
    workers.emplace_back([&, t] {
      try {
        drive(groups[t]);
      } catch (...) {
        failures[t] = std::current_exception();
      }
    });
  try {
    drive(groups[0]);
  } catch (...) {
    failures[0] = std::current_exception();
  }
  for (auto& w : workers) w.join();
  for (auto& f : failures)
    if (f) std::rethrow_exception(f);
  LatencySamples connect_latency_us, describe_latency_us, seek_latency_us, startup_latency_us, after_connect_latency_us;
  for (const Group& g : groups) {
    connect_latency_us.merge(g.connect_us);
    describe_latency_us.merge(g.describe_us);
    seek_latency_us.merge(g.seek_us);
    startup_latency_us.merge(g.startup_us);
    after_connect_latency_us.merge(g.after_connect_us);
  }
  const double elapsed = seconds_between(start, Clock::now());

  Stats total;
  std::uint64_t in_time = 0, late = 0, bytes = 0, jumps = 0;
  unsigned viewers_late = 0;
  for (auto& v : viewers) {
    total.merge(v.session->stats());
    in_time += v.in_time;
    late += v.late;
    bytes += v.bytes;
    jumps += v.jumps;
    viewers_late += v.late > 0;
  }
  const double goodput = static_cast<double>(bytes) * 8 / elapsed / 1e6;
  std::printf("bench: %u viewers, %.1f s, pattern %s, chunk %zu KiB\n", clients, elapsed, pattern.c_str(), viewers[0].buffer.size() / 1024);
  std::printf("  chunks: %llu in time, %llu late (%.2f%%); viewers with a late chunk: %u of %u\n",
              static_cast<unsigned long long>(in_time), static_cast<unsigned long long>(late),
              in_time + late ? 100.0 * static_cast<double>(late) / static_cast<double>(in_time + late) : 0.0, viewers_late, clients);
  std::printf("  goodput: %.2f Mbit/s aggregate (%.2f MB/s), %.3f Mbit/s per viewer\n", goodput, goodput / 8, goodput / clients);
  std::printf("  startup (open to first byte): %llu starts, p50 %llu us, p99 %llu us; the rdma_cm connect p50 %llu us, the rest of the"
              " open (posting the first bytes; the catalog and index follow them) p50 %llu us; beyond the connect p50 %llu us\n",
              static_cast<unsigned long long>(startup_latency_us.count()), static_cast<unsigned long long>(startup_latency_us.percentile(0.5)),
              static_cast<unsigned long long>(startup_latency_us.percentile(0.99)), static_cast<unsigned long long>(connect_latency_us.percentile(0.5)),
              static_cast<unsigned long long>(describe_latency_us.percentile(0.5)), static_cast<unsigned long long>(after_connect_latency_us.percentile(0.5)));
  std::printf("  seeks: %llu (%llu jumps), time to first byte p50 %llu us, p90 %llu us, p99 %llu us\n",
              static_cast<unsigned long long>(seek_latency_us.count()), static_cast<unsigned long long>(jumps),
              static_cast<unsigned long long>(seek_latency_us.percentile(0.5)), static_cast<unsigned long long>(seek_latency_us.percentile(0.9)),
              static_cast<unsigned long long>(seek_latency_us.percentile(0.99)));
  std::printf("  reads: %s\n", total.summary().c_str());
  // One machine-readable line for the benchmark scripts.
  std::printf("BENCH clients=%u seconds=%.3f in_time=%llu late=%llu viewers_late=%u goodput_mbps=%.3f seek_p50_us=%llu seek_p99_us=%llu startup_p50_us=%llu startup_p99_us=%llu connect_p50_us=%llu describe_p50_us=%llu after_connect_p50_us=%llu after_connect_p99_us=%llu read_p50_us=%llu read_p99_us=%llu reconnects=%llu bench_cpu_s=%.3f seeks=%llu\n",
              clients, elapsed, static_cast<unsigned long long>(in_time), static_cast<unsigned long long>(late), viewers_late, goodput,
              static_cast<unsigned long long>(seek_latency_us.percentile(0.5)), static_cast<unsigned long long>(seek_latency_us.percentile(0.99)),
              static_cast<unsigned long long>(startup_latency_us.percentile(0.5)), static_cast<unsigned long long>(startup_latency_us.percentile(0.99)),
              static_cast<unsigned long long>(connect_latency_us.percentile(0.5)), static_cast<unsigned long long>(describe_latency_us.percentile(0.5)),
              static_cast<unsigned long long>(after_connect_latency_us.percentile(0.5)), static_cast<unsigned long long>(after_connect_latency_us.percentile(0.99)),
              static_cast<unsigned long long>(total.read_latency_us.percentile(0.5)), static_cast<unsigned long long>(total.read_latency_us.percentile(0.99)),
              static_cast<unsigned long long>(total.reconnects), process_cpu_seconds(),
              static_cast<unsigned long long>(seek_latency_us.count()));
  std::fflush(stdout);  // before the viewers disconnect: the benchmark reads the server's steady state up to here
  return exit_ok;
}

}  // namespace vod::client::cli
