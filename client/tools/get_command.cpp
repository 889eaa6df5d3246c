// vod-client get rdma://host[:port]/NAME -o FILE: byte-identical download, with progress.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "commands.hpp"
#include "live_stream.hpp"
#include "output.hpp"
#include "progress_bar.hpp"
#include "vod/client/movie_reader.hpp"
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
  MovieReader reader(session);
  const int fd = output == "-" ? STDOUT_FILENO : open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw ClientError(ErrorKind::usage, "cannot create " + output + ": " + std::strerror(errno));
  ProgressBar bar(uri.movie.value(), reader.size());
  std::vector<std::uint8_t> buffer(4u << 20);
  for (;;) {
    const std::size_t n = reader.read(buffer);
    if (n == 0) break;
    if (!write_all(fd, buffer.data(), n, output)) throw std::runtime_error("writing " + output + ": the reader closed the pipe");
    if (!quiet) bar.update(reader.position());
  }
  if (fd != STDOUT_FILENO && close(fd) != 0) throw std::runtime_error("closing " + output + ": " + std::strerror(errno));
  if (!quiet) bar.finish();
  log::info("vod-client", "get " + uri.to_string() + ": " + session.stats().summary() +
                                (session.transport_summary().empty() ? "" : "; " + session.transport_summary()));
  return exit_ok;
}

}  // namespace vod::client::cli
