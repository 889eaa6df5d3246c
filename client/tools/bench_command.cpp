// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client bench: N simulated viewers in one process, each on its own connection, each reading at
// its movie's bitrate (or --rate) like a player with a small buffer, sequentially or jumping to a
// random position every few seconds, or closing and reopening its movie every few seconds (zap:
// startup, measured many times in one warm process, as a player opening movie after movie).
// Reports chunks in time vs late, goodput, seek latency and startup. This file reads the options and
// sets the run up (the movies, the rings' memory, the descriptors); bench_run.cpp runs it.
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "bench_run.hpp"
#include "commands.hpp"
#include "progress_bar.hpp"
#include "vod/client/live_session.hpp"
#include "vod/log.hpp"

namespace vod::client::cli {

namespace {
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

// False after --help.
bool parse_bench_options(const std::vector<std::string>& args, CommonOptions& common, BenchSettings& b) {
  namespace po = boost::program_options;
  po::options_description opts("bench");
  opts.add_options()("clients", po::value(&b.clients)->default_value(b.clients), "simulated viewers, one connection each")(
      "duration", po::value(&b.duration)->default_value(b.duration), "seconds to run (bounded)")(
      "pattern", po::value(&b.pattern)->default_value(b.pattern),
      "sequential, jump:SECONDS (a random position every SECONDS) or zap:SECONDS (reopen the movie every SECONDS)")(
      "rate", po::value(&b.rate_mbps)->default_value(0), "Mbit/s per viewer; 0 = each movie's bitrate")(
      "startup", po::value(&b.startup)->default_value(b.startup),
      "seconds a player allows before its first chunk is due, after a start or jump")(
      "lead", po::value(&b.lead)->default_value(b.lead), "seconds ahead of need a viewer asks for its next chunk")(
      "seed", po::value(&b.seed)->default_value(b.seed), "random seed for jump positions (and --zipf choices)")(
      "zipf", po::value(&b.zipf)->default_value(b.zipf),
      "with the catalog's movies (no NAME): each viewer picks one by Zipf's law with this exponent "
      "(the catalog's first movie the most popular); 0: in turn")(
      "threads", po::value(&b.threads)->default_value(b.threads),
      "threads driving the viewers, each on its own completion queue (at most one per viewer)");
  opts.add_options()("rendition", po::value(&b.rendition), "a title: every player pinned to this rendition (its label), never switching");
  opts.add_options()("credits", po::value(&b.credits)->default_value(b.credits),
                     "--pattern live: notifications each viewer lets the server send ahead");
  opts.add(common_options(common));
  po::variables_map vm;
  const std::string usage =
      "vod-client bench rdma://host[:port][/NAME] --clients N --duration S --pattern sequential|jump:S|zap:S [--rate MBPS]\n"
      "       vod-client bench rdma://host[:port]/live/NAME --clients N --duration S --pattern live\n"
      "       vod-client bench rdma://host[:port]/TITLE --clients N --duration S [--rendition LABEL]";
  if (!parse(args, opts, usage, b.uri_text, vm)) return false;
  apply(common);
  if (b.clients == 0 || b.duration <= 0 || b.duration > 3600)
    throw ClientError(ErrorKind::usage, "--clients must be > 0 and --duration in (0, 3600]");
  if (b.pattern == "live") return true;
  if (b.pattern.rfind("jump:", 0) == 0 || b.pattern.rfind("zap:", 0) == 0) {
    b.zap = b.pattern[0] == 'z';
    b.jump_every = std::atof(b.pattern.c_str() + b.pattern.find(':') + 1);
    if (b.jump_every <= 0)
      throw ClientError(ErrorKind::usage,
                        "--pattern " + b.pattern.substr(0, b.pattern.find(':')) + ":SECONDS needs a positive number of seconds");
  } else if (b.pattern != "sequential") {
    throw ClientError(ErrorKind::usage, "--pattern must be sequential, jump:SECONDS, zap:SECONDS or live");
  }
  return true;
}

// Which movies: the URI's, or the catalog's (those with a bitrate to pace at, unless --rate gives one).
std::vector<std::string> bench_movies(const Uri& uri, const SessionOptions& options, double rate_mbps) {
  if (uri.movie) return {*uri.movie};
  Uri catalog_uri = uri;  // the same server and token, no movie
  catalog_uri.movie.reset();
  Session catalog(catalog_uri, options);
  std::vector<std::string> movies;
  for (const auto& e : catalog.catalog().entries)
    if (e.size > 0 && (e.bitrate_bps > 0 || rate_mbps > 0)) movies.push_back(e.name);
  if (movies.empty())
    throw ClientError(ErrorKind::unknown_movie,
                      "the catalog of " + catalog.server() + " has no movie with a known bitrate to play (give --rate)");
  return movies;
}

// Every viewer registers a ring of its own: fit them to the memory this machine has (and may lock),
// or refuse now, saying how much is needed, rather than be killed by the OOM killer later.
void fit_viewer_rings(EngineOptions& engine, unsigned clients) {
  const EngineOptions asked = engine;
  const std::uint64_t budget = ring_memory_budget();
  const auto fitted = fit_rings(asked, clients, budget);
  const double mib = 1 << 20;
  if (!fitted) {
    EngineOptions least = asked;
    least.readahead_bytes = least.chunk_size;  // the least fit_rings tries
    least.read_depth = 2;
    throw ClientError(ErrorKind::usage,
                      std::to_string(clients) + " viewers need at least " +
                          std::to_string(static_cast<long>(ring_bytes_for(least) * static_cast<double>(clients) / mib)) +
                          " MiB of registered rings, and this machine has " + std::to_string(static_cast<long>(budget / mib)) +
                          " MiB for them (3/4 of MemAvailable, within RLIMIT_MEMLOCK): use fewer --clients or a smaller --chunk-kib");
  }
  if (fitted->readahead_bytes == asked.readahead_bytes && fitted->read_depth == asked.read_depth) return;
  std::fprintf(stderr,
               "bench: %u viewers' rings of %.1f MiB each (%.0f MiB) exceed the %.0f MiB this machine has for them; "
               "using %.1f MiB each: read-ahead %.1f MiB, read depth %u\n",
               clients, static_cast<double>(ring_bytes_for(asked)) / mib, static_cast<double>(ring_bytes_for(asked)) * clients / mib,
               static_cast<double>(budget) / mib, static_cast<double>(ring_bytes_for(*fitted)) / mib,
               static_cast<double>(fitted->readahead_bytes) / mib, fitted->read_depth);
  engine = *fitted;
}

}  // namespace

int run_bench(const std::vector<std::string>& args) {
  CommonOptions common;
  BenchSettings settings;
  if (!parse_bench_options(args, common, settings)) return exit_ok;
  const Uri uri = command_uri(settings.uri_text, common);
  if (settings.pattern == "live") {
    if (!uri.live) throw ClientError(ErrorKind::usage, "--pattern live needs a live channel: rdma://host[:port]/live/NAME");
    return bench_live(uri, settings.clients, settings.duration, common, settings.credits);
  }
  if (names_a_title(uri, common.session)) {
    if (settings.pattern != "sequential") throw ClientError(ErrorKind::usage, "a title plays as a player does: --pattern sequential only");
    fit_viewer_rings(common.session.engine, settings.clients);
    return bench_title(uri, settings.clients, settings.duration, common, settings.rendition);
  }
  if (!settings.rendition.empty()) throw ClientError(ErrorKind::usage, "--rendition applies to a title");
  const std::vector<std::string> movies = bench_movies(uri, common.session, settings.rate_mbps);
  fit_viewer_rings(common.session.engine, settings.clients);
  // Every viewer's connection completes on its group's shared CQ: one fd to sleep on, one poll for
  // all. Each connection still has its rdma_cm event channel (an fd): allow as many as the hard limit.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  BenchRun run(settings, common.session, uri, movies);
  run.run();
  run.report();
  return exit_ok;
}

}  // namespace vod::client::cli
