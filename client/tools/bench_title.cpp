// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client bench rdma://host/TITLE: N players of a title (TitleReader, adaptive bitrate over the
// transport's Reads, or pinned with --rendition), each on its own connection and thread, paced as a
// player with TitleReader's buffer is. Reports the chunks (the title's segments) in time, the
// switches per minute, the time spent per rendition, and the first bytes after a switch against
// those of any other segment. A thread per player: a title bench has a handful of them (the shaped
// link of docs/benchmarks.md), not the thousand bench_run.cpp drives from a few threads.
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "vod/log.hpp"

namespace vod::client::cli {

namespace {

using Clock = std::chrono::steady_clock;

struct Player {
  TitleStats stats;
  std::string error;
  std::string rendition;  // the last one read
};

void play(const Uri& catalog_uri, const std::string& title, const SessionOptions& options, const TitleOptions& title_options,
          Clock::time_point end, Player& p) {
  try {
    Session session(catalog_uri, options);
    TitleReader reader(session, title, title_options);
    std::vector<std::uint8_t> buffer(session.engine().chunk_size());
    while (Clock::now() < end && reader.read(buffer) > 0) {}
    p.stats = reader.stats();
    p.rendition = reader.rendition();
  } catch (const std::exception& e) {
    p.error = e.what();
  }
}

}  // namespace

int bench_title(const Uri& uri, unsigned clients, double duration, const CommonOptions& common, const std::string& rendition) {
  Uri catalog_uri = uri;
  catalog_uri.movie.reset();
  const TitleOptions options = title_options(rendition);
  std::vector<Player> players(clients);
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(duration));
  {
    std::vector<std::jthread> threads;
    for (Player& p : players) threads.emplace_back([&, &p = p] { play(catalog_uri, *uri.movie, common.session, options, end, p); });
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  std::uint64_t segments = 0, late = 0, switches = 0, failed = 0;
  std::map<std::string, double> per_rendition;
  LatencySamples after_switch, other;
  for (std::size_t i = 0; i < players.size(); ++i) {
    const Player& p = players[i];
    if (!p.error.empty()) {
      ++failed;
      log::error("bench", "player " + std::to_string(i) + ": " + p.error);
      continue;
    }
    segments += p.stats.segments;
    late += p.stats.late_segments;
    switches += p.stats.switches;
    for (const auto& [label, s] : p.stats.seconds_per_rendition) per_rendition[label] += s;
    after_switch.merge(p.stats.first_byte_after_switch_us);
    other.merge(p.stats.first_byte_us);
    log::info("bench", "player " + std::to_string(i) + ": " + std::to_string(p.stats.segments) + " segments, " +
                           std::to_string(p.stats.late_segments) + " late, " + std::to_string(p.stats.switches) + " switches, ending on " +
                           p.rendition);
  }
  const double in_time = segments ? 100.0 * static_cast<double>(segments - late) / static_cast<double>(segments) : 0;
  const double per_minute = static_cast<double>(switches) / static_cast<double>(clients) / (elapsed / 60);
  double media_seconds = 0;
  for (const auto& [label, s] : per_rendition) media_seconds += s;
  using ull = unsigned long long;
  std::printf("bench: %u players of title '%s'%s, %.1f s: %llu segments, %llu in time (%.1f %%), %.2f switches per minute per player\n",
              clients, uri.movie->c_str(), rendition.empty() ? "" : (" pinned to " + rendition).c_str(), elapsed,
              static_cast<ull>(segments), static_cast<ull>(segments - late), in_time, per_minute);
  std::string rendition_fields;
  for (const auto& [label, s] : per_rendition) {
    std::printf("  %s: %.1f s of media (%.0f %%)\n", label.c_str(), s, media_seconds > 0 ? 100 * s / media_seconds : 0);
    rendition_fields += " seconds_" + label + "=" + std::to_string(s);
  }
  std::printf(
      "  first bytes after a switch decision: p50 %llu us, max %llu us (%llu switches); after any other segment's: p50 %llu us (%llu)\n",
      static_cast<ull>(after_switch.percentile(0.5)), static_cast<ull>(after_switch.percentile(1.0)),
      static_cast<ull>(after_switch.count()), static_cast<ull>(other.percentile(0.5)), static_cast<ull>(other.count()));
  std::printf(
      "BENCH title clients=%u seconds=%.3f segments=%llu late=%llu in_time_pct=%.2f switches=%llu switches_per_min=%.3f "
      "switch_first_byte_p50_us=%llu switch_first_byte_max_us=%llu first_byte_p50_us=%llu failed=%llu%s\n",
      clients, elapsed, static_cast<ull>(segments), static_cast<ull>(late), in_time, static_cast<ull>(switches), per_minute,
      static_cast<ull>(after_switch.percentile(0.5)), static_cast<ull>(after_switch.percentile(1.0)),
      static_cast<ull>(other.percentile(0.5)), static_cast<ull>(failed), rendition_fields.c_str());
  std::fflush(stdout);
  return failed ? exit_error : exit_ok;
}

}  // namespace vod::client::cli
