// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client get rdma://host[:port]/NAME -o FILE: byte-identical download, with progress.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "commands.hpp"
#include "live_stream.hpp"
#include "output.hpp"
#include "progress_bar.hpp"
#include "vod/client/sequential_reads.hpp"
#include "vod/log.hpp"

namespace vod::client::cli {

int run_get(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  CommonOptions common;
  std::string output;
  bool quiet = false;
  po::options_description opts("get");
  opts.add_options()("output,o", po::value(&output)->required(), "file to write ('-' for stdout)")(
      "quiet,q", po::bool_switch(&quiet), "no progress display");
  double duration = 0;
  opts.add_options()("duration", po::value(&duration), "live channels: record this many seconds (required for /live/ URIs)");
  LiveCliOptions live;
  opts.add(live_options(live));
  opts.add(common_options(common));
  std::string uri_text;
  po::variables_map vm;
  if (!parse(args, opts, "vod-client get rdma://host[:port]/NAME -o FILE   (or rdma://host[:port]/live/NAME -o FILE --duration S)", uri_text, vm))
    return exit_ok;
  apply(common);
  const Uri uri = command_uri(uri_text, common);
  if (!uri.movie) throw ClientError(ErrorKind::usage, "get needs a movie in the URI: rdma://host[:port]/NAME");
  if (uri.live) {
    if (duration <= 0) throw ClientError(ErrorKind::usage, "get of a live channel needs --duration SECONDS (a live stream has no end)");
    const int fd = output == "-" ? STDOUT_FILENO : open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw ClientError(ErrorKind::usage, "cannot create " + output + ": " + std::strerror(errno));
    const int rc = stream_live(uri, common, live, fd, output, duration);
    if (fd != STDOUT_FILENO && close(fd) != 0) throw std::runtime_error("closing " + output + ": " + std::strerror(errno));
    return rc;
  }
  if (vm.count("duration")) throw ClientError(ErrorKind::usage, "--duration applies to live channels only; get downloads a whole movie");

  Session session(uri, common.session);
  OutputFile out(output, session.zero_copy_active());
  ProgressBar bar(uri.movie.value(), session.size());
  // Reads land in registered buffers advertised ahead, which go to the file as they are: no copy in
  // user space (Stats: copied), through O_DIRECT where the file system takes it.
  const EngineOptions& e = common.session.engine;
  const std::size_t buffer_bytes = 4 * e.chunk_size;
  SequentialReads reads(session, 0, session.size(), buffer_bytes, SequentialReads::buffers_for(buffer_bytes, e.chunk_size, session.read_depth()));
  while (auto piece = reads.next()) {
    if (!out.write(piece->buffer.data(), piece->bytes)) throw std::runtime_error("writing " + output + ": the reader closed the pipe");
    if (!quiet) bar.update(piece->offset + piece->bytes);
  }
  if (!reads.at_end()) throw std::logic_error("get: no registered buffer to read into (the pool is smaller than one piece ahead)");
  out.close();
  if (!quiet) bar.finish();
  log::info("vod-client", "get " + uri.to_string() + ": " + session.stats().summary() +
                                (session.transport_summary().empty() ? "" : "; " + session.transport_summary()));
  return exit_ok;
}

}  // namespace vod::client::cli
