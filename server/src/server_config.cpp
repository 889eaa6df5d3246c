// SPDX-License-Identifier: LGPL-2.1-or-later
#include "server_config.hpp"

#include "origin/origin_http.hpp"

#include "vod/cluster/etcd_options.hpp"
#include "vod/cluster/etcd_url.hpp"
#include "vod/cluster/member_record.hpp"
#include "vod/protocol/catalog_layout.hpp"

#include "udp/udp_service.hpp"
#include "windows/isolation.hpp"

#include <fstream>
#include <iostream>
#include <stdexcept>

#include "vod/protocol/write_record.hpp"
#include "vod/units.hpp"

namespace vod::server {

namespace po = boost::program_options;

static void check_live_options(ServerConfig& c, const std::string& buffer, const std::string& split, const std::string& keep) {
  c.live_buffer_seconds = static_cast<double>(parse_duration(buffer, "--live-buffer").count()) / 1000;
  if (c.live_buffer_seconds < 0.5 || c.live_buffer_seconds > 600) throw std::invalid_argument("--live-buffer must be 0.5 s to 10 m");
  c.live_record_split = parse_duration(split, "--live-record-split");
  c.live_record_keep = parse_size(keep, "--live-record-keep");
  if (!c.live_record) return;
  if (c.live.empty()) throw std::invalid_argument("--live-record records live channels: give --live NAME=SOURCE too");
  if (c.media_dir.empty()) throw std::invalid_argument("--live-record writes into the media directory: give --media-dir too");
  if (c.live_record_split.count() != 0 && c.live_record_split < std::chrono::seconds(1))
    throw std::invalid_argument("--live-record-split must be 0 (one file per stream) or at least 1 s");
}

static void check_dvr_options(ServerConfig& c, const std::string& dvr, const std::string& size, const std::string& cache) {
  c.live_dvr = parse_duration(dvr, "--live-dvr");
  c.live_dvr_size = parse_size(size, "--live-dvr-size");
  c.live_dvr_cache = parse_size(cache, "--live-dvr-cache");
  if (c.live_dvr.count() == 0) return;
  if (c.live.empty()) throw std::invalid_argument("--live-dvr keeps live channels: give --live NAME=SOURCE too");
  if (c.live_dvr < std::chrono::seconds(10) || c.live_dvr > std::chrono::hours(72))
    throw std::invalid_argument("--live-dvr must be 10 s to 72 h");
  if (c.live_dvr_dir.empty()) {
    if (c.state_dir.empty()) throw std::invalid_argument("--live-dvr needs a place on disk: give --live-dvr-dir, or a --state-dir");
    c.live_dvr_dir = c.state_dir + "/dvr";
  }
}

static void check_cluster_options(ServerConfig& c) {
  if (c.cluster.empty()) {
    if (!c.advertise.empty() || !c.cluster_spread.empty())
      throw std::invalid_argument("--advertise and --cluster-spread go with --cluster etcd://HOST:2379");
    return;
  }
  try {
    cluster::set_etcd_security(c.etcd);
    (void)cluster::parse_etcd_url(c.cluster);
    std::string host = c.advertise.empty() ? c.bind : std::string();
    std::uint16_t port = c.port;
    if (!c.advertise.empty()) cluster::parse_host_port(c.advertise, host, port, "--advertise");
    if (host == "0.0.0.0" || host == "::")
      throw std::invalid_argument("--cluster needs --advertise ADDR[:PORT]: the address clients reach this server at (--bind is " + c.bind +
                                  ")");
    cluster::MemberRecord self;
    self.host = host;
    self.port = port;
    c.advertise = self.id();
  } catch (const cluster::ClusterError& e) {
    throw std::invalid_argument(std::string("--cluster: ") + e.what());
  }
  if (!(c.cluster_weight > 0 && c.cluster_weight <= cluster::kMaxWeight))
    throw std::invalid_argument("--cluster-weight must be in (0, 1000]");
  if (c.cluster_ttl < 2 || c.cluster_ttl > 300) throw std::invalid_argument("--cluster-ttl must be 2..300 seconds");
  for (const auto& s : c.cluster_spread) {
    const auto eq = s.rfind('=');
    const std::string k = eq == std::string::npos ? std::string() : s.substr(eq + 1);
    if (eq == std::string::npos || proto::invalid_name_reason(s.substr(0, eq)) || k.empty() || k.size() > 2 ||
        k.find_first_not_of("0123456789") != std::string::npos || std::stoul(k) < 1 || std::stoul(k) > cluster::kMaxSpread)
      throw std::invalid_argument("--cluster-spread '" + s + "': expected NAME=K, a movie name and K from 1 to 16");
    c.spread[s.substr(0, eq)] = static_cast<unsigned>(std::stoul(k));
  }
  // The record this server will put must be one every reader takes (cluster::decode_member): at
  // most 256 spread names and 256 channels, in 64 KiB. Names of up to 1024 bytes could break that
  // bound where 128-byte ones could not, so it is checked here, at start, with large numbers in
  // the load fields and 256 bytes to spare for the digits of real ones.
  cluster::MemberRecord record;
  cluster::parse_host_port(c.advertise, record.host, record.port, "--advertise");
  record.spread = c.spread;
  for (const auto& channel : c.live_channels) record.live.push_back(channel.name);
  record.nic_gbps = record.weight = 1e6;
  record.cache_bytes = record.load.connections = ~0ull;
  record.load.estimated_mbps = 1e18;
  record.catalog_generation = ~0u;
  const std::size_t bytes = cluster::encode_member(record).size();
  if (c.spread.size() > cluster::kMaxListed || record.live.size() > cluster::kMaxListed || bytes + 256 > cluster::kMaxRecordBytes)
    throw std::invalid_argument("--cluster-spread and --live: a member record lists at most " + std::to_string(cluster::kMaxListed) +
                                " movies and " + std::to_string(cluster::kMaxListed) + " channels in " +
                                std::to_string(cluster::kMaxRecordBytes) + " bytes; these make " + std::to_string(c.spread.size()) +
                                " and " + std::to_string(record.live.size()) + " in " + std::to_string(bytes));
}

std::optional<ServerConfig> parse_server_config(int argc, char** argv) {
  ServerConfig c;
  unsigned port = c.port;
  unsigned udp_port = c.udp_port;
  std::string config_file, cache_size, segment_size = "4M", pin_budget = "0", isolation_memory = "8G";
  std::string live_buffer = "4s", record_split = "1h", record_keep = "0", dvr = "0", dvr_size = "0", dvr_cache = "64M";
  bool no_memory_windows = false;  // the old name of --isolation shared
  po::options_description general(
      "vod-server: serves every file of a directory from registered memory; clients read it by one-sided RDMA Read\n\n"
      "usage: vod-server --media-dir DIR [options]\n\noptions");
  // An option table, laid out by hand: one option a line.
  // clang-format off
  general.add_options()
      ("help,h", "show this help")
      ("version,V", "show the version")
      ("config", po::value(&config_file), "read options from FILE too (lines of name = value; the command line wins)")
      ("media-dir", po::value(&c.media_dir), "directory whose regular, non-hidden files, at any depth, are the movies, named by their paths in it (required unless only --live channels are served)")
      ("bind", po::value(&c.bind)->default_value(c.bind), "address to listen on, on an RDMA-capable interface")
      ("port", po::value(&port)->default_value(port), "rdma_cm port (RDMA_PS_TCP)")
      ("device", po::value(&c.device)->default_value(c.device), "serve only on this RDMA device (e.g. mlx5_0, rxe0); empty = all")
      ("auth-secret", po::value(&c.auth_secret), "FILE of 'ID HEX' keys: every connection needs an access token made with one (vod-token); "
                                                "SIGHUP re-reads it (docs/security.md)")
      ("isolation", po::value(&c.isolation)->default_value(c.isolation), "with --auth-secret: how a connection is kept to what its token granted: "
                                                                         "auto (the strongest each device can do), windows (a memory window per "
                                                                         "connection), pd (a protection domain per connection, for iWARP), or shared "
                                                                         "(the shared regions' rkeys, weaker: docs/security.md)")
      ("isolation-memory", po::value(&isolation_memory)->default_value(isolation_memory), "with --isolation pd: memory all connections' own "
                                                                                          "registrations may pin at once (e.g. 8G); beyond it a connect is refused")
      ("no-memory-windows", po::bool_switch(&no_memory_windows), "the same as --isolation shared")
      ("revoked", po::value(&c.revoked), "FILE of 'key N', 'token HEX' and 'client ADDR' lines: refused, and disconnected when SIGHUP re-reads it")
      ("connect-rate", po::value(&c.connect_rate)->default_value(c.connect_rate), "connect requests per second one client address may make (0: no limit); "
                                                                                 "more are rejected as 'rate limited'")
      ("connect-burst", po::value(&c.connect_burst)->default_value(c.connect_burst), "connect requests an idle address may make at once, with --connect-rate")
      ("max-per-source", po::value(&c.max_per_source)->default_value(c.max_per_source), "connections one client address may have at once (0: no limit); "
                                                                                       "more are rejected as 'source limit'")
      ("max-clients", po::value(&c.max_clients)->default_value(c.max_clients), "connections beyond this are rejected as 'server full'")
      ("backlog", po::value(&c.backlog)->default_value(c.backlog), "pending connection requests rdma_listen queues")
      ("remux", po::value(&c.remux)->default_value(c.remux), "none, or ts: remux every movie to MPEG-TS at load (no re-encoding)")
      ("drain-seconds", po::value(&c.drain_seconds)->default_value(c.drain_seconds), "after SIGTERM, seconds connected clients may keep reading before the server disconnects them")
      ("log-level", po::value(&c.log_level)->default_value(c.log_level), "debug, info, warn or error")
      ("log-format", po::value(&c.log_format)->default_value(c.log_format), "text (one line per event) or json (one object per line, for log shippers)")
      ("metrics-port", po::value(&c.metrics_port)->default_value(c.metrics_port), "serve Prometheus metrics at http://METRICS-BIND:PORT/metrics (0: off)")
      ("metrics-bind", po::value(&c.metrics_bind)->default_value(c.metrics_bind), "the address /metrics listens on, with --metrics-port")
      ("live", po::value(&c.live)->composing(), "a live channel NAME=SOURCE (repeatable); SOURCE is file:PATH (a TS file replayed in a loop), "
                                               "udp://[GROUP@]HOST:PORT (TS over UDP, multicast GROUP joined on HOST's interface), "
                                               "gst:PIPELINE (ending in MPEG-TS) or - (TS on standard input)")
      ("live-buffer", po::value(&live_buffer)->default_value(live_buffer), "the duration of a live channel its ring holds, e.g. 4s (late joiners start at the newest keyframe in it)")
      ("live-bitrate", po::value(&c.live_bitrate_mbps)->default_value(c.live_bitrate_mbps), "Mbit/s assumed for sizing the ring of a udp:, gst: or stdin channel, whose rate is unknown until it runs")
      ("live-multicast", po::value(&c.live_multicast), "GROUP[:PORT]: also send every live channel's records to this multicast group by Write-Record "
                                                        "(default port 7472), for viewers without RDMA: vod-client --transport udp --udp-group GROUP[:PORT]")
      ("live-multicast-interface", po::value(&c.live_multicast_interface), "IPv4 address (IPv6: name) of the interface to send the multicast from")
      ("live-multicast-ttl", po::value(&c.live_multicast_ttl)->default_value(c.live_multicast_ttl), "multicast TTL (hops); 1 stays on the local network")
      ("live-multicast-payload", po::value(&c.live_multicast_payload)->default_value(c.live_multicast_payload),
       "bytes per multicast datagram, rounded down to whole 188-byte TS packets (1316 fits a 1500-byte MTU)")
      ("live-dvr", po::value(&dvr)->default_value(dvr), "keep each live channel's last DURATION (e.g. 30m, 2h) on disk, where viewers pause, rewind "
                                                      "and start behind live by one-sided Reads (0: off)")
      ("live-dvr-dir", po::value(&c.live_dvr_dir), "with --live-dvr: where the windows' files go (default STATE-DIR/dvr)")
      ("live-dvr-size", po::value(&dvr_size)->default_value(dvr_size), "with --live-dvr: the disk one window may take at most (e.g. 4G; "
                                                                     "0: its duration at 1.5 times the channel's bitrate)")
      ("live-dvr-cache", po::value(&dvr_cache)->default_value(dvr_cache), "with --live-dvr and no --cache-size: the memory windows are read "
                                                                        "from (a segment cache of --segment-size slots)")
      ("live-record", po::bool_switch(&c.live_record), "record every live channel, byte for byte, as MPEG-TS files 'Live/NAME/NAME YYYY-MM-DD HH.MM.SS.ts' "
                                                      "(UTC) of the media directory, each listed as a movie once complete")
      ("live-record-split", po::value(&record_split)->default_value(record_split), "with --live-record: a new file at the first keyframe after this "
                                                                                 "long (e.g. 1h, 30m; 0: one file per stream); every end of stream ends one too")
      ("live-record-keep", po::value(&record_keep)->default_value(record_keep), "with --live-record: the disk the recordings may take (e.g. 500G); "
                                                                               "the oldest are deleted first (0: no limit)")
      ("udp-port", po::value(&udp_port)->default_value(udp_port), "serve Write-Record over UDP on this port too (7471 is the documented one); 0: off")
      ("udp-max-rate", po::value(&c.udp_max_rate_mbps)->default_value(c.udp_max_rate_mbps), "Mbit/s the UDP side sends at most, in all")
      ("udp-client-rate", po::value(&c.udp_client_rate_mbps)->default_value(c.udp_client_rate_mbps), "Mbit/s one client address gets at most (it may ask for less)")
      ("udp-max-payload", po::value(&c.udp_max_payload)->default_value(c.udp_max_payload), "bytes of payload per UDP datagram at most (clients ask for what their path MTU allows; above 32444 each datagram is sent alone, not in GSO trains)")
      ("udp-zero-copy", po::bool_switch(&c.udp_zero_copy), "send loaded movies' bytes with MSG_ZEROCOPY (the kernel reads them in place; pays off on a real NIC only, loopback and veth copy anyway; cached movies and live channels are always copied)")
      ("no-rdma", po::bool_switch(&c.no_rdma), "serve over UDP only (needs --udp-port): no RDMA device is needed")
      ("cache-size", po::value(&cache_size), "serve movies from a segment cache of SIZE (e.g. 8G) filled from disk on demand, instead of loading "
                                             "every movie into memory at start; libraries larger than memory need it (docs/segment-cache.md)")
      ("segment-size", po::value(&segment_size)->default_value(segment_size), "with --cache-size: bytes per segment and per cache slot, a power of two from 64K to 1G")
      ("pin", po::value(&c.pin)->composing(), "with --cache-size: movies whose path matches this shell pattern (repeatable; * matches / too) are loaded whole at start, "
                                              "as without a cache, in memory beside the cache")
      ("pin-budget", po::value(&pin_budget)->default_value(pin_budget), "with --pin: bytes the pinned movies may take at most (0: no limit); "
                                                                          "a match beyond it is served from the cache")
      ("origin", po::value(&c.origin), "serve the library of this HTTP origin (http[s]://HOST/PATH/, listed with nginx's autoindex_format json) "
       "from the segment cache, each segment filled by one Range request; needs --cache-size, not --media-dir")
      ("origin-cacert", po::value(&c.origin_cacert), "with --origin https://: the CA certificates (PEM) the origin's certificate is checked against, instead of the system's")
      ("origin-timeout", po::value(&c.origin_timeout_ms)->default_value(c.origin_timeout_ms), "with --origin: milliseconds one request to the origin may take (a fill is retried with backoff for 1.5 times this)")
      ("origin-rescan", po::value(&c.origin_rescan_s)->default_value(c.origin_rescan_s), "with --origin: seconds between listings of the origin (0: only at SIGHUP, and when a fill finds an object changed)")
      ("state-dir", po::value(&c.state_dir)->default_value(c.state_dir), "with --cache-size: where the keyframe indexes and content identities of "
                                                                         "cached movies are kept across restarts (built after start, once per file version); empty: not kept")
      ("probe-budget", po::value(&c.probe_budget_ms)->default_value(c.probe_budget_ms), "with --cache-size: milliseconds the start-up scan probes cached "
                                                                                        "movies before it lists the rest unprobed (probed after the server listens)")
      ("cache-grace", po::value(&c.cache_grace_ms)->default_value(c.cache_grace_ms), "with --cache-size: milliseconds after a client asked for a segment during which it is never evicted")
      ("cache-read-deadline", po::value(&c.cache_read_deadline_ms)->default_value(c.cache_read_deadline_ms),
       "with --cache-size: milliseconds a client's segment Read may take before it drops it; an evicted slot is refilled only after longer")
      ("cluster", po::value(&c.cluster), "join a fleet: register in etcd at etcd://HOST[:PORT][/PREFIX] (etcds:// for TLS) under a lease, kept alive, with this "
                                         "server's address, weight and load; clients of rdma+etcd:// URIs place movies over the members")
      ("advertise", po::value(&c.advertise), "with --cluster: the ADDR[:PORT] clients connect to (default: --bind and --port, unless --bind is 0.0.0.0 or ::)")
      ("cluster-weight", po::value(&c.cluster_weight)->default_value(c.cluster_weight), "with --cluster: this server's capacity relative to the others (0..1000)")
      ("cluster-ttl", po::value(&c.cluster_ttl)->default_value(c.cluster_ttl), "with --cluster: seconds of the etcd lease; a server that dies leaves the fleet within this")
      ("cluster-spread", po::value(&c.cluster_spread)->composing(), "with --cluster: NAME=K (repeatable): place this popular movie on its top K servers (1..16), "
                                                                    "viewers spread over them");
  // clang-format on
  cluster::add_etcd_options(general, c.etcd);
  // Options for the tests only: accepted, not listed by --help.
  po::options_description hidden;
  hidden.add_options()("udp-test-drop", po::value(&c.udp_test_drop),
                       "last:N,record:N,datagram:N: datagrams the UDP sender drops on purpose")(
      "test-fail-binds", po::value(&c.test_fail_binds), "N: every Nth connection's memory window binds fail at the device")(
      "test-fail-notifications", po::value(&c.test_fail_notifications), "N: every Nth segment notification post is refused (ENOMEM)")(
      "test-evict-every", po::value(&c.test_evict_every_ms),
      "MS: this often, evict the slot of the segment most recently asked for (else the newest filled), grace or not");
  po::options_description all;
  all.add(general).add(hidden);
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, all), vm);
    if (vm.count("config")) {
      const std::string path = vm["config"].as<std::string>();
      std::ifstream in(path);
      if (!in) throw std::invalid_argument("cannot read the config file " + path);
      po::store(po::parse_config_file(in, all), vm);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(std::string(e.what()) + " (see vod-server --help)");
  }
  if (vm.count("version")) {
    std::cout << "vod-server " VOD_VERSION "\n";
    return std::nullopt;
  }
  if (vm.count("help")) {
    std::cout << general
              << "\nsignals: SIGTERM/SIGINT stop accepting, let clients drain, exit 0; SIGHUP rescans the media directory into a new "
                 "catalog generation\n";
    return std::nullopt;
  }
  if (!c.origin.empty()) {
    if (!c.media_dir.empty()) throw std::invalid_argument("--origin and --media-dir are two libraries: give one");
    c.origin = origin::normalise_origin(c.origin);
    if (c.origin_timeout_ms < 500 || c.origin_timeout_ms > 120000) throw std::invalid_argument("--origin-timeout must be 500..120000 ms");
  } else if (c.media_dir.empty() && c.live.empty()) {
    throw std::invalid_argument("--media-dir is required, unless the server only serves --live channels (see vod-server --help)");
  }
  for (const auto& text : c.live) c.live_channels.push_back(live::parse_channel(text));
  check_live_options(c, live_buffer, record_split, record_keep);
  check_dvr_options(c, dvr, dvr_size, dvr_cache);
  if (c.live_bitrate_mbps <= 0 || c.live_bitrate_mbps > 10000) throw std::invalid_argument("--live-bitrate must be in (0, 10000] Mbit/s");
  if (!c.live_multicast.empty() && c.live.empty())
    throw std::invalid_argument("--live-multicast sends live channels: give --live NAME=SOURCE too");
  if (c.live_multicast_ttl < 1 || c.live_multicast_ttl > 255) throw std::invalid_argument("--live-multicast-ttl must be 1..255");
  if (c.live_multicast_payload < 188 || c.live_multicast_payload > proto::kWriteRecordMaxPayload)
    throw std::invalid_argument("--live-multicast-payload must be 188.." + std::to_string(proto::kWriteRecordMaxPayload));
  if (port == 0 || port > 65535) throw std::invalid_argument("--port must be 1..65535");
  c.port = static_cast<std::uint16_t>(port);
  if (udp_port > 65535) throw std::invalid_argument("--udp-port must be 0..65535");
  c.udp_port = static_cast<std::uint16_t>(udp_port);
  if (c.no_rdma && c.udp_port == 0) throw std::invalid_argument("--no-rdma serves over UDP only: give --udp-port too (7471)");
  if (c.udp_max_rate_mbps <= 0 || c.udp_client_rate_mbps <= 0)
    throw std::invalid_argument("--udp-max-rate and --udp-client-rate must be positive");
  if (auto why = udp::max_payload_problem(c.udp_max_payload)) throw std::invalid_argument(*why);
  if (!c.auth_secret.empty() && (c.udp_port || !c.live_multicast.empty()))
    throw std::invalid_argument(
        "--auth-secret covers RDMA connections only: Write-Record over UDP (--udp-port, --live-multicast) "
        "carries no token yet, so it would serve without one; run it without --auth-secret");
  if (c.connect_rate < 0 || c.connect_burst < 1) throw std::invalid_argument("--connect-rate must be >= 0 and --connect-burst >= 1");
  if (c.max_clients == 0) throw std::invalid_argument("--max-clients must be at least 1");
  if (c.remux != "none" && c.remux != "ts") throw std::invalid_argument("--remux must be none or ts");
  if (c.drain_seconds < 0) throw std::invalid_argument("--drain-seconds must not be negative");
  if (!cache_size.empty()) c.cache_size = parse_size(cache_size, "--cache-size");
  const std::uint64_t seg = parse_size(segment_size, "--segment-size");
  if (seg < (64u << 10) || seg > (1u << 30) || (seg & (seg - 1)) != 0)
    throw std::invalid_argument("--segment-size must be a power of two from 64K to 1G");
  c.segment_size = static_cast<std::uint32_t>(seg);
  if (c.live_dvr.count() && !c.cache_size && (c.live_dvr_cache < 4ull * seg || c.live_dvr_cache / seg > (1u << 24)))
    throw std::invalid_argument("--live-dvr-cache must hold 4 to 2^24 segments of --segment-size " + segment_size);
  c.pin_budget = parse_size(pin_budget, "--pin-budget");
  c.isolation_memory = parse_size(isolation_memory, "--isolation-memory");
  (void)windows::parse_isolation(c.isolation);  // refused now, with the choices, not at the first device
  if (no_memory_windows) {
    if (c.isolation != "auto" && c.isolation != "shared")
      throw std::invalid_argument("--no-memory-windows is --isolation shared: not with --isolation " + c.isolation);
    c.isolation = "shared";
  }
  if (!c.origin.empty() && !c.cache_size) throw std::invalid_argument("--origin serves from the segment cache: give --cache-size too");
  if (c.cache_size) {
    if (c.cache_size < c.segment_size)
      throw std::invalid_argument("--cache-size must hold at least one segment (--segment-size " + segment_size + ")");
    if (c.cache_size / c.segment_size > (1u << 24))
      throw std::invalid_argument("--cache-size holds more than 2^24 segments: raise --segment-size");
    if (c.cache_read_deadline_ms < 100 || c.cache_read_deadline_ms > 60000)
      throw std::invalid_argument("--cache-read-deadline must be 100..60000 ms");
    if (c.cache_grace_ms > 600000) throw std::invalid_argument("--cache-grace must be at most 600000 ms");
  } else if (!c.pin.empty() || c.pin_budget) {
    throw std::invalid_argument("--pin and --pin-budget choose what stays out of the segment cache: give --cache-size too");
  }
  check_cluster_options(c);  // after the live channels: the member record lists them
  return c;
}

}  // namespace vod::server
