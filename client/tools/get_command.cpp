// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client get rdma://host[:port]/NAME -o FILE [--range FIRST-LAST]: byte-identical download (of
// the whole movie, or of a range of it), with progress.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "commands.hpp"
#include "live_stream.hpp"
#include "output.hpp"
#include "progress_bar.hpp"
#include "vod/client/byte_range.hpp"
#include "vod/client/sequential_reads.hpp"
#include "vod/log.hpp"

namespace vod::client::cli {

namespace {
// --range FIRST-LAST as [from, to) of a movie of `size` bytes: HTTP's byte-range-spec, decided by
// the Range parser vod-proxy answers with.
std::pair<std::uint64_t, std::uint64_t> byte_range(const std::string& spec, const std::string& name, std::uint64_t size) {
  const RangeDecision d = decide_range("bytes=" + spec, size);
  switch (d.kind) {
    case RangeDecision::Kind::single: return {d.first, d.first + d.length};
    case RangeDecision::Kind::unsatisfiable:
      throw ClientError(ErrorKind::out_of_range,
                        "--range " + spec + " lies past the end of '" + name + "' (" + std::to_string(size) + " bytes)");
    case RangeDecision::Kind::multiple: throw ClientError(ErrorKind::usage, "--range takes one range, not a list: '" + spec + "'");
    default:
      throw ClientError(ErrorKind::usage, "--range '" + spec + "' is not FIRST-LAST, FIRST- or -N (byte offsets from 0, LAST included)");
  }
}
}  // namespace

int run_get(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  CommonOptions common;
  std::string output;
  bool quiet = false;
  po::options_description opts("get");
  opts.add_options()("output,o", po::value(&output)->required(), "file to write ('-' for stdout)")("quiet,q", po::bool_switch(&quiet),
                                                                                                   "no progress display");
  double duration = 0;
  opts.add_options()("duration", po::value(&duration), "live channels: record this many seconds (required for /live/ URIs)");
  std::string start = "0";
  opts.add_options()("start", po::value(&start)->default_value(start),
                     "live channels with a DVR window: begin -SECONDS (or -5m) behind live, or at a UTC time such as 2026-11-27T20:00:00Z");
  std::string range;
  opts.add_options()("range,r", po::value(&range),
                     "FIRST-LAST: only these bytes, counted from 0 (as HTTP's Range and curl -r: "
                     "FIRST- to the end, --range=-N the last N bytes)");
  LiveCliOptions live;
  opts.add(live_options(live));
  opts.add(common_options(common));
  std::string uri_text;
  po::variables_map vm;
  if (!parse(args, opts, "vod-client get rdma://host[:port]/NAME -o FILE   (or rdma://host[:port]/live/NAME -o FILE --duration S)",
             uri_text, vm))
    return exit_ok;
  apply(common);
  const Uri uri = command_uri(uri_text, common);
  if (!uri.movie) throw ClientError(ErrorKind::usage, "get needs a movie in the URI: rdma://host[:port]/NAME");
  if (uri.live) {
    if (vm.count("range")) throw ClientError(ErrorKind::usage, "--range applies to movies: a live channel has no byte offsets");
    if (duration <= 0) throw ClientError(ErrorKind::usage, "get of a live channel needs --duration SECONDS (a live stream has no end)");
    const int fd = output == "-" ? STDOUT_FILENO : open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw ClientError(ErrorKind::usage, "cannot create " + output + ": " + std::strerror(errno));
    const auto dvr = dvr_start(start, true);
    const int rc = dvr ? stream_dvr(uri, common, live, *dvr, fd, output, duration) : stream_live(uri, common, live, fd, output, duration);
    if (fd != STDOUT_FILENO && close(fd) != 0) throw std::runtime_error("closing " + output + ": " + std::strerror(errno));
    return rc;
  }
  if (vm.count("duration")) throw ClientError(ErrorKind::usage, "--duration applies to live channels only; get downloads a whole movie");
  if (!vm["start"].defaulted()) throw ClientError(ErrorKind::usage, "--start applies to live channels; a part of a movie is --range");

  Session session(uri, common.session);
  const auto [from, to] =
      vm.count("range") ? byte_range(range, *uri.movie, session.size()) : std::pair<std::uint64_t, std::uint64_t>{0, session.size()};
  OutputFile out(output, session.zero_copy_active());
  ProgressBar bar(uri.movie.value(), to - from);
  // Reads land in registered buffers advertised ahead, which go to the file as they are: no copy in
  // user space (Stats: copied), through O_DIRECT where the file system takes it.
  const EngineOptions& e = common.session.engine;
  const std::size_t buffer_bytes = 4 * e.chunk_size;
  SequentialReads reads(session, from, to, buffer_bytes, SequentialReads::buffers_for(buffer_bytes, e.chunk_size, session.read_depth()));
  while (auto piece = reads.next()) {
    if (!out.write(piece->buffer.data(), piece->bytes)) throw std::runtime_error("writing " + output + ": the reader closed the pipe");
    if (!quiet) bar.update(piece->offset + piece->bytes - from);
  }
  if (!reads.at_end()) throw std::logic_error("get: no registered buffer to read into (the pool is smaller than one piece ahead)");
  out.close();
  if (!quiet) bar.finish();
  log::info("vod-client", "get " + uri.to_string() + ": " + session.stats().summary() +
                              (session.transport_summary().empty() ? "" : "; " + session.transport_summary()));
  return exit_ok;
}

}  // namespace vod::client::cli
