// vod-client play rdma://host[:port]/NAME [--start SECONDS]: a paced stream to stdout, for a player
// reading a pipe (vod-client play ... | ffplay -). NAME may be a title (a folder of renditions):
// then the stream is MPEG-TS stepping between its renditions as the Reads' goodput allows
// (TitleReader), or pinned to one with --rendition LABEL.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <optional>
#include <vector>

#include "commands.hpp"
#include "live_stream.hpp"
#include "output.hpp"
#include "vod/client/movie_reader.hpp"
#include "vod/client/title_reader.hpp"
#include "vod/log.hpp"
#include "vod/media/title_remux_module.hpp"

namespace vod::client::cli {

namespace {

// A title's stream: TitleReader to stdout; its switches and per-rendition time logged at the end.
int play_title(Session& session, const Uri& uri, const TitleOptions& options) {
  TitleReader reader(session, *uri.movie, options);
  std::vector<std::uint8_t> buffer(session.engine().chunk_size());
  for (;;) {
    const std::size_t n = reader.read(buffer);
    if (n == 0) break;
    if (!write_all(STDOUT_FILENO, buffer.data(), n, "stdout")) {
      log::info("vod-client", "the player closed the stream");
      return exit_ok;
    }
  }
  const TitleStats& s = reader.stats();
  std::string per;
  for (const auto& label : reader.labels())
    if (const auto it = s.seconds_per_rendition.find(label); it != s.seconds_per_rendition.end())
      per += " " + label + " " + std::to_string(static_cast<long long>(it->second + 0.5)) + " s;";
  log::info("vod-client", "play " + uri.to_string() + ": " + std::to_string(s.segments) + " segments (" + std::to_string(s.late_segments) +
                              " late), " + std::to_string(s.switches) + " switches;" + per + " " + reader.read_stats().summary());
  return exit_ok;
}

}  // namespace

TitleOptions title_options(const std::string& rendition) {
  TitleOptions options;
  options.remux = [](std::uint64_t size, const TitleOptions::ReadAt& read_at, std::uint64_t start_us, std::uint64_t end_us, unsigned n) {
    return media::load_title_remux()(size, read_at, start_us, end_us, n);  // vod-title-remux.so, loaded at the first remuxed segment
  };
  if (!rendition.empty()) options.rendition = rendition;
  return options;
}

bool names_a_title(const Uri& uri, const SessionOptions& options) {
  if (!uri.movie || uri.live) return false;
  Uri catalog_uri = uri;
  catalog_uri.movie.reset();
  Session catalog(catalog_uri, options);
  return !catalog.catalog().find(*uri.movie) && proto::find_title(catalog.catalog().titles, *uri.movie);
}

int run_play(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  CommonOptions common;
  double start = 0, rate_mbps = 0, burst = 1.0;
  std::string start_text = "0";
  bool unpaced = false;
  po::options_description opts("play");
  opts.add_options()("start", po::value(&start_text)->default_value(start_text),
                     "start at this many seconds (the keyframe at or before it); a live channel with a DVR window: -SECONDS (or -5m) "
                     "behind live, or a UTC time such as 2026-11-27T20:00:00Z")("rate", po::value(&rate_mbps)->default_value(0),
                                                                                "pacing rate in Mbit/s; 0 = the movie's bitrate")(
      "burst", po::value(&burst)->default_value(1.0), "seconds delivered at once after a start, as a player's initial buffer")(
      "unpaced", po::bool_switch(&unpaced), "as fast as RDMA allows");
  std::string rendition;
  opts.add_options()("rendition", po::value(&rendition), "a title: play this rendition (its label, e.g. 720p), never switching");
  double duration = 0;
  opts.add_options()("duration", po::value(&duration)->default_value(0),
                     "live channels: stop after this many seconds (0: when the player quits)");
  LiveCliOptions live;
  opts.add(live_options(live));
  opts.add(common_options(common));
  std::string uri_text;
  po::variables_map vm;
  if (!parse(args, opts, "vod-client play rdma://host[:port]/NAME [--start SECONDS] | player -   (or rdma://host[:port]/live/NAME)",
             uri_text, vm))
    return exit_ok;
  apply(common);
  if (duration < 0) throw ClientError(ErrorKind::usage, "--duration must not be negative");
  const Uri uri = command_uri(uri_text, common);
  if (!uri.movie) throw ClientError(ErrorKind::usage, "play needs a movie in the URI: rdma://host[:port]/NAME");
  if (isatty(STDOUT_FILENO)) throw ClientError(ErrorKind::usage, "play writes the movie to stdout: pipe it into a player (| ffplay -)");
  std::signal(SIGPIPE, SIG_IGN);  // a player that quits ends the stream with EPIPE
  const auto dvr = dvr_start(start_text, uri.live);
  if (uri.live)
    return dvr ? stream_dvr(uri, common, live, *dvr, STDOUT_FILENO, "stdout", duration)
               : stream_live(uri, common, live, STDOUT_FILENO, "stdout", duration);
  start = std::stod(start_text);

  std::optional<Session> opened;
  try {
    opened.emplace(uri, common.session);
  } catch (const ClientError& e) {
    // Not a movie: perhaps a title (a folder of renditions), found in the catalog.
    if (e.kind() != ErrorKind::unknown_movie) throw;
    Uri catalog_uri = uri;
    catalog_uri.movie.reset();
    Session catalog_session(catalog_uri, common.session);
    if (!proto::find_title(catalog_session.catalog().titles, *uri.movie)) throw;
    TitleOptions options = title_options(rendition);
    options.paced = !unpaced;
    options.start_us = static_cast<std::uint64_t>(start * 1e6);
    return play_title(catalog_session, uri, options);
  }
  if (!rendition.empty()) throw ClientError(ErrorKind::usage, "--rendition applies to a title; '" + *uri.movie + "' is a movie");
  Session& session = *opened;
  MovieReader reader(session, PlaybackOptions{!unpaced, rate_mbps * 1e6, burst});
  if (start > 0) {
    const std::uint64_t at = reader.seek_time(static_cast<std::uint64_t>(start * 1e6));
    log::info("vod-client", "play " + uri.to_string() + " from " + std::to_string(start) + " s: keyframe at byte " + std::to_string(at));
  }
  std::vector<std::uint8_t> buffer(session.engine().chunk_size());
  for (;;) {
    const std::size_t n = reader.read(buffer);
    if (n == 0) break;
    if (!write_all(STDOUT_FILENO, buffer.data(), n, "stdout")) {
      log::info("vod-client", "the player closed the stream at byte " + std::to_string(reader.position()));
      return exit_ok;
    }
  }
  log::info("vod-client", "play " + uri.to_string() + ": " + session.stats().summary() +
                              (session.transport_summary().empty() ? "" : "; " + session.transport_summary()));
  return exit_ok;
}

}  // namespace vod::client::cli
