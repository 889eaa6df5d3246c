// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client: list, download, play and load-test movies on a vod-server, over one-sided RDMA Read.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "vod/cluster/etcd_options.hpp"
#include "vod/cluster/etcd_url.hpp"
#include "vod/defaults.hpp"
#include "vod/log.hpp"
#include "vod/rdma/error.hpp"

namespace vod::client::cli {

int exit_status_for(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::unknown_movie: return exit_unknown_movie;
    case ErrorKind::server_unreachable: return exit_unreachable;
    case ErrorKind::no_device: return exit_no_device;
    case ErrorKind::out_of_range: return exit_out_of_range;
    case ErrorKind::connection_lost: return exit_connection_lost;
    case ErrorKind::usage: return exit_usage;
    default: return exit_error;
  }
}

boost::program_options::options_description common_options(CommonOptions& o) {
  namespace po = boost::program_options;
  const EngineOptions e;
  const SessionOptions s;
  po::options_description d("Connection and read pipeline");
  // An option table, laid out by hand: one option a line.
  // clang-format off
  d.add_options()
      ("chunk-kib", po::value(&o.chunk_kib)->default_value(e.chunk_size / 1024), "bytes per RDMA Read, in KiB (at least 8)")
      ("readahead-kib", po::value(&o.readahead_kib)->default_value(e.readahead_bytes / 1024), "read-ahead window, in KiB (the most, with --readahead-seconds)")
      ("readahead-seconds", po::value(&o.readahead_seconds)->default_value(s.readahead_seconds), "read-ahead window in seconds of the movie's bitrate; 0 = --readahead-kib")
      ("depth", po::value(&o.depth)->default_value(e.read_depth), "RDMA Reads in flight wanted; the server and the devices may allow fewer")
      ("readahead-depth", po::value(&o.readahead_depth)->default_value(e.readahead_depth), "read-ahead Reads in flight at most (fewer: faster seeks)")
      ("first-read-kib", po::value(&o.first_read_kib)->default_value(e.first_read_bytes / 1024), "the first Read after a start or seek, in KiB, before whole chunks (0: whole chunks only)")
      ("connect-timeout", po::value(&o.connect_timeout_s)->default_value(static_cast<double>(s.connect_timeout.count()) / 1000), "seconds to wait for the server to answer")
      ("reconnect-for", po::value(&o.reconnect_for_s)->default_value(static_cast<double>(s.reconnect.give_up_after.count()) / 1000), "seconds to keep reconnecting after the connection breaks")
      ("log-level", po::value(&o.log_level)->default_value(o.log_level), "debug, info, warn or error")
      ("log-format", po::value(&o.log_format)->default_value(o.log_format), "text (one line per event) or json (one object per line, for log shippers)")
      ("transport", po::value(&o.transport)->default_value(o.transport), "rdma (one-sided RDMA Read) or udp (Write-Record over UDP: no RDMA device needed here)")
      ("udp-port", po::value(&o.udp_port)->default_value(s.udp.port), "the server's Write-Record port, with --transport udp (the URI's port is RDMA's)")
      ("udp-rate", po::value(&o.udp_rate_mbps)->default_value(s.udp.rate_bps / 1e6), "Mbit/s this client asks the server to send at, with --transport udp")
      ("udp-payload", po::value(&o.udp_payload)->default_value(s.udp.max_payload), "bytes per UDP datagram at most; 0: what the path MTU allows")
      ("cluster", po::value(&o.cluster), "etcd://HOST[:PORT][/PREFIX]: a fleet; the URI is then a movie NAME (or live/NAME), placed over its members "
                                         "(the same as rdma+etcd://HOST:PORT/NAME?prefix=PREFIX)")
      ("client-id", po::value(&o.session.client_id), "in a fleet: this client's id, which picks among the servers of a movie spread over several "
                                                     "(default: random per process)")
      ("zero-copy", po::value(&o.zero_copy)->default_value(o.zero_copy), "auto: RDMA Reads land straight in registered buffers (get), "
                                                                          "off: every byte through the read ring and copied (tests, bisecting)");
  // clang-format on
  cluster::add_etcd_options(d, o.etcd);
  return d;
}

void apply(CommonOptions& o) {
  try {
    log::set_level(log::parse_level(o.log_level));
    log::set_format(log::parse_format(o.log_format));
  } catch (const std::invalid_argument& e) {
    throw ClientError(ErrorKind::usage, e.what());
  }
  try {
    cluster::set_etcd_security(o.etcd);  // before any etcd URL is parsed
  } catch (const cluster::ClusterError& e) {
    throw ClientError(ErrorKind::usage, e.what());
  }
  if (o.chunk_kib < 8) throw ClientError(ErrorKind::usage, "--chunk-kib must be at least 8 (RDMA Reads of 8 KiB or more)");
  if (o.depth == 0) throw ClientError(ErrorKind::usage, "--depth must be at least 1");
  o.session.engine.chunk_size = o.chunk_kib * 1024;
  o.session.engine.readahead_bytes = o.readahead_kib * 1024;
  o.session.engine.read_depth = o.depth;
  o.session.engine.readahead_depth = std::max(o.readahead_depth, 1u);
  o.session.engine.first_read_bytes = o.first_read_kib * 1024;
  o.session.engine.direct = parse_zero_copy(o.zero_copy);
  if (o.readahead_seconds < 0) throw ClientError(ErrorKind::usage, "--readahead-seconds must not be negative");
  o.session.readahead_seconds = o.readahead_seconds;
  o.session.connect_timeout = std::chrono::milliseconds(static_cast<long>(o.connect_timeout_s * 1000));
  o.session.reconnect.give_up_after = std::chrono::milliseconds(static_cast<long>(o.reconnect_for_s * 1000));
  if (o.transport == "udp") o.session.transport = Transport::udp;
  else if (o.transport != "rdma") throw ClientError(ErrorKind::usage, "--transport must be rdma or udp");
  if (o.udp_port == 0 || o.udp_port > 65535) throw ClientError(ErrorKind::usage, "--udp-port must be 1..65535");
  if (o.udp_rate_mbps <= 0) throw ClientError(ErrorKind::usage, "--udp-rate must be positive");
  o.session.udp.port = static_cast<std::uint16_t>(o.udp_port);
  o.session.udp.rate_bps = o.udp_rate_mbps * 1e6;
  o.session.udp.max_payload = o.udp_payload;
  o.session.udp.depth = std::max(1u, o.depth / 2);
}

Uri command_uri(const std::string& text, const CommonOptions& o) {
  if (o.cluster.empty()) return parse_uri(text);
  cluster::EtcdEndpoint etcd;
  try {
    etcd = cluster::parse_etcd_url(o.cluster);
  } catch (const cluster::ClusterError& e) {
    throw ClientError(ErrorKind::usage, std::string("--cluster: ") + e.what());
  }
  if (text.rfind("rdma", 0) == 0)
    throw ClientError(ErrorKind::usage, "with --cluster, name the movie alone (NAME or live/NAME), not a URI: " + text);
  return parse_uri(std::string(etcd.tls ? "rdma+etcds://" : "rdma+etcd://") + cluster::format_host_port(etcd.host, etcd.port) + "/" + text +
                   "?prefix=" + etcd.prefix);
}

bool parse(const std::vector<std::string>& args, const boost::program_options::options_description& opts, const std::string& usage,
           std::string& uri, boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::options_description all;
  po::options_description hidden;
  hidden.add_options()("uri", po::value(&uri));
  po::options_description help("General");
  help.add_options()("help,h", "show this help");
  all.add(opts).add(help).add(hidden);
  po::positional_options_description pos;
  pos.add("uri", 1);
  // "--start -300": a negative number is an option's value, not an option (Boost would read "-3").
  std::vector<std::string> joined;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool negative_next =
        i + 1 < args.size() && args[i + 1].size() > 1 && args[i + 1][0] == '-' && args[i + 1][1] >= '0' && args[i + 1][1] <= '9';
    if (args[i].rfind("--", 0) == 0 && args[i].find('=') == std::string::npos && negative_next) {
      joined.push_back(args[i] + "=" + args[i + 1]);
      ++i;
    } else {
      joined.push_back(args[i]);
    }
  }
  try {
    po::store(po::command_line_parser(joined).options(all).positional(pos).run(), vm);
    if (vm.count("help")) {  // before notify(), which would insist on required options
      std::cout << "usage: " << usage << "\n\n" << opts << help << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw ClientError(ErrorKind::usage, std::string(e.what()) + "\nusage: " + usage);
  }
  if (uri.empty() && !vm.count("cluster")) throw ClientError(ErrorKind::usage, "missing the rdma:// URI\nusage: " + usage);
  return true;
}

}  // namespace vod::client::cli

namespace {

static_assert(vod::defaults::kRdmaPort == 7470, "kUsage below names the default port: keep them equal");
const char* kUsage = R"(vod-client: movies from a vod-server, over one-sided RDMA Read

usage: vod-client COMMAND [options] URI
  list  rdma://host[:port]                      the catalog as a table
  get   rdma://host[:port]/NAME -o FILE         download, byte-identical, with progress
  play  rdma://host[:port]/NAME [--start S]     paced stream to stdout (| ffplay -, | vlc -); NAME may
                                                be a title, played adaptively (or --rendition LABEL)
  bench rdma://host[:port][/NAME] --clients N --duration S --pattern sequential|jump:S
                                                simulated viewers, one connection each (of a
                                                title: players, chunks in time, switches)
  cluster etcd://HOST[:PORT][/PREFIX] [NAME...]  a fleet's members, their load, and where each
                                                movie (or each NAME) is placed

A fleet of servers registered in etcd (vod-server --cluster) is one URI: rdma+etcd://HOST:2379/NAME
(?prefix=P, ?k=N), or --cluster etcd://HOST:2379 and the movie's NAME.

'vod-client COMMAND --help' lists a command's options. The default port is 7470.
'vod-client --version' prints the version.

exit status: 0 ok, 1 error, 2 usage, 3 unknown movie, 4 server unreachable, 5 no RDMA device,
             6 seek out of range, 7 connection lost

Every command reads over RDMA by default; --transport udp reads the same movies by UDP
Write-Record from a server started with --udp-port, with no RDMA device on this machine.
)";

}  // namespace

int main(int argc, char** argv) {
  using namespace vod::client::cli;
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? exit_usage : exit_ok;
  }
  if (args[0] == "-V" || args[0] == "--version") {
    std::fputs("vod-client " VOD_VERSION "\n", stdout);
    return exit_ok;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  try {
    if (command == "list") return run_list(args);
    if (command == "get") return run_get(args);
    if (command == "play") return run_play(args);
    if (command == "bench") return run_bench(args);
    if (command == "cluster") return run_cluster(args);
    std::fprintf(stderr, "vod-client: unknown command '%s'\n\n%s", command.c_str(), kUsage);
    return exit_usage;
  } catch (const vod::client::ClientError& e) {
    std::fprintf(stderr, "vod-client: %s: %s\n", vod::client::to_string(e.kind()), e.what());
    return exit_status_for(e.kind());
  } catch (const vod::client::UriError& e) {
    std::fprintf(stderr, "vod-client: %s\n", e.what());
    return exit_usage;
  } catch (const vod::rdma::NoDeviceError& e) {
    std::fprintf(stderr, "vod-client: %s\n", e.what());
    return exit_no_device;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vod-client: error: %s\n", e.what());
    return exit_error;
  }
}
