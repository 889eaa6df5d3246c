// SPDX-License-Identifier: LGPL-2.1-or-later
#include "proxy_config.hpp"

#include "vod/cluster/etcd_options.hpp"

#include "host_allow_list.hpp"

#include <boost/program_options.hpp>
#include <fstream>
#include <iostream>

namespace vod::proxy {

namespace po = boost::program_options;

std::optional<ProxyConfig> parse_proxy_config(int argc, char** argv) {
  ProxyConfig c;
  std::string config_file;
  po::options_description d(
      "vod-proxy: serves a vod-server's movies over HTTP, for VLC, ffmpeg, mpv and browsers\n\n"
      "usage: vod-proxy --server rdma://host[:port] [--listen 127.0.0.1:8080] [options]\n\noptions");
  // An option table, laid out by hand: one option a line.
  // clang-format off
  d.add_options()
      ("help,h", "show this help")
      ("version,V", "show the version")
      ("config", po::value(&config_file), "read options from FILE too (name = value lines; the command line wins)")
      ("server", po::value(&c.server), "the vod-server, rdma://host[:port] (required), or a fleet: etcd://HOST[:2379][/PREFIX] "
                                       "(or rdma+etcd://HOST:2379), whose members' catalogs are merged and movies placed over them")
      ("cluster", po::value(&c.cluster), "the same as --server etcd://HOST[:2379][/PREFIX]: a fleet registered in etcd")
      ("listen", po::value(&c.listen)->default_value(c.listen), "HTTP address:port; loopback unless --allow-remote")
      ("allow-remote", po::bool_switch(&c.allow_remote), "allow --listen on a non-loopback address (logged as a warning)")
      ("chunk-kib", po::value(&c.chunk_kib)->default_value(c.chunk_kib), "bytes per RDMA Read and per HTTP body block, in KiB")
      ("zero-copy", po::value(&c.zero_copy)->default_value(c.zero_copy),
       "auto: RDMA Reads land straight in registered body blocks, which go to the socket as they are; off: through the read ring, copied")
      ("zero-copy-buffers", po::value(&c.zero_copy_buffers)->default_value(c.zero_copy_buffers),
       "registered body blocks at most (each --chunk-kib: the memory the proxy pins); responses beyond use plain memory and a copy")
      ("depth", po::value(&c.depth)->default_value(c.depth), "RDMA Reads in flight per movie session")
      ("reconnect-for", po::value(&c.reconnect_for)->default_value(c.reconnect_for), "seconds to keep reconnecting when the vod-server goes away")
      ("header-limit", po::value(&c.header_limit)->default_value(c.header_limit), "largest request header accepted, in bytes (431 beyond)")
      ("max-connections", po::value(&c.max_connections)->default_value(c.max_connections),
       "HTTP connections open at once; beyond, a new connection gets 503 and is closed (counted in /metrics, logged at most every 10 s)")
      ("header-timeout", po::value(&c.header_timeout)->default_value(c.header_timeout),
       "seconds for a whole request header to arrive, from the connection's start or, kept alive, from the request's first byte (408 beyond)")
      ("idle-timeout", po::value(&c.idle_timeout)->default_value(c.idle_timeout), "seconds a kept-alive connection may wait for its next request before it is closed")
      ("stall-timeout", po::value(&c.stall_timeout)->default_value(c.stall_timeout),
       "seconds a response may wait for its client to take more bytes (a paused player) before it is closed, its body blocks given back")
      ("cors-origin", po::value(&c.cors_origins)->composing(),
       "ORIGIN (scheme://host[:port]): let pages of ORIGIN read the proxy's responses, e.g. a player on another site (repeatable); "
       "off by default")
      ("allow-host", po::value(&c.allow_hosts)->composing(),
       "NAME: answer requests whose Host is NAME too (repeatable); by default only localhost, 127.0.0.1, [::1] and the --listen address "
       "(with a wildcard --listen, also this host's addresses and hostname): other names get 421 (DNS rebinding protection)")
      ("live-buffer-kib", po::value(&c.live_buffer_kib)->default_value(c.live_buffer_kib),
       "each live channel's recent bytes kept for its viewers, in KiB; a viewer further behind jumps to the newest keyframe")
      ("log-level", po::value(&c.log_level)->default_value(c.log_level), "debug, info, warn or error")
      ("log-format", po::value(&c.log_format)->default_value(c.log_format), "text (one line per event) or json (one object per line, for log shippers)")
      ("transport", po::value(&c.transport)->default_value(c.transport), "rdma, or udp: read by Write-Record over UDP (the server needs --udp-port; no RDMA device here)")
      ("udp-port", po::value(&c.udp_port)->default_value(c.udp_port), "the server's Write-Record port, with --transport udp")
      ("udp-group", po::value(&c.udp_group), "with --transport udp: the multicast GROUP[:PORT] the server sends live channels to (its --live-multicast)")
      ("web-dir", po::value(&c.web_dir), "the web pages' directory (catalog.html, watch.html, static/); default: <prefix>/share/rdma-vod/web")
      ("thumbnail-width", po::value(&c.thumbnail_width)->default_value(c.thumbnail_width), "width of the pages' pictures in pixels (64..1920)")
      ("hls-segment-seconds", po::value(&c.hls_segment_seconds)->default_value(c.hls_segment_seconds),
       "HLS: cut movies into segments of about this many seconds, at keyframes (1..60)")
      ("hls-cache-mib", po::value(&c.hls_cache_mib)->default_value(c.hls_cache_mib),
       "HLS: MiB of fMP4 segments (of MP4 and Matroska movies, remuxed on the fly) kept for the next viewer (0..65536)")
      ("hls-live-segment-seconds", po::value(&c.hls_live_segment_seconds)->default_value(c.hls_live_segment_seconds),
       "LL-HLS of live channels: segments of about this many seconds, at keyframes (1..30)")
      ("hls-part-seconds", po::value(&c.hls_part_seconds)->default_value(c.hls_part_seconds),
       "LL-HLS of live channels: the part target in seconds (0.1..2, at most the segment's)")
      ("hls-live-window", po::value(&c.hls_live_window)->default_value(c.hls_live_window),
       "LL-HLS of live channels: complete segments kept in the playlist (3..60)")
      ("hls-live-idle", po::value(&c.hls_live_idle)->default_value(c.hls_live_idle),
       "LL-HLS of live channels: seconds without a request before a channel's packaging stops (5..3600)")
      ("udp-interface", po::value(&c.udp_interface), "with --udp-group: the IPv4 address (IPv6: name) of the interface to join the group on");
  // clang-format on
  cluster::add_etcd_options(d, c.etcd);
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, d), vm);
    if (vm.count("version")) {
      std::cout << "vod-proxy " VOD_VERSION "\n";
      return std::nullopt;
    }
    if (vm.count("help")) {
      std::cout
          << d
          << "\nendpoints: / (catalog page), /watch/NAME (player page), /poster/NAME and /strip/K/NAME (JPEG pictures), /catalog.json,\n"
             "/playlist.m3u, /movies/NAME (GET, HEAD, Range), /live/NAME (endless TS), /metrics\n";
      return std::nullopt;
    }
    if (vm.count("config")) {
      std::ifstream in(vm["config"].as<std::string>());
      if (!in) throw std::invalid_argument("cannot read the config file " + vm["config"].as<std::string>());
      po::store(po::parse_config_file(in, d), vm);
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(std::string(e.what()) + " (see vod-proxy --help)");
  }
  try {
    cluster::set_etcd_security(c.etcd);  // before any etcd URL is parsed
  } catch (const cluster::ClusterError& e) {
    throw std::invalid_argument(e.what());
  }
  if (!c.cluster.empty()) {
    if (!c.server.empty()) throw std::invalid_argument("give --server or --cluster, not both");
    if (c.cluster.rfind("etcd://", 0) != 0 && c.cluster.rfind("etcds://", 0) != 0)
      throw std::invalid_argument("--cluster takes a fleet's etcd URL: etcd://HOST[:2379][/PREFIX] (etcds:// for TLS)");
    c.server = c.cluster;
  }
  if (c.server.empty())
    throw std::invalid_argument("--server rdma://host[:port] (or --cluster etcd://host:2379) is required (see vod-proxy --help)");
  if (c.chunk_kib < 8) throw std::invalid_argument("--chunk-kib must be at least 8");
  if (c.depth == 0) throw std::invalid_argument("--depth must be at least 1");
  if (c.stall_timeout == 0) throw std::invalid_argument("--stall-timeout must be at least 1 second");
  if (c.zero_copy != "auto" && c.zero_copy != "off")
    throw std::invalid_argument(
        "--zero-copy must be auto (Reads land straight in registered body blocks) or off (through the read ring, copied), not '" +
        c.zero_copy + "'");
  if (c.transport != "rdma" && c.transport != "udp") throw std::invalid_argument("--transport must be rdma or udp");
  if (c.thumbnail_width < 64 || c.thumbnail_width > 1920) throw std::invalid_argument("--thumbnail-width must be 64..1920");
  for (const auto& o : c.cors_origins)
    if (const char* why = invalid_cors_origin(o)) throw std::invalid_argument("--cors-origin '" + o + "': " + why);
  if (c.hls_cache_mib > 65536) throw std::invalid_argument("--hls-cache-mib must be 0..65536");
  if (!(c.hls_segment_seconds >= 1 && c.hls_segment_seconds <= 60)) throw std::invalid_argument("--hls-segment-seconds must be 1..60");
  if (!(c.hls_live_segment_seconds >= 1 && c.hls_live_segment_seconds <= 30))
    throw std::invalid_argument("--hls-live-segment-seconds must be 1..30");
  if (!(c.hls_part_seconds >= 0.1 && c.hls_part_seconds <= 2 && c.hls_part_seconds <= c.hls_live_segment_seconds))
    throw std::invalid_argument("--hls-part-seconds must be 0.1..2, and at most --hls-live-segment-seconds");
  if (c.hls_live_window < 3 || c.hls_live_window > 60) throw std::invalid_argument("--hls-live-window must be 3..60");
  if (c.hls_live_idle < 5 || c.hls_live_idle > 3600) throw std::invalid_argument("--hls-live-idle must be 5..3600");
  if (c.udp_port == 0 || c.udp_port > 65535) throw std::invalid_argument("--udp-port must be 1..65535");
  if (c.max_connections == 0) throw std::invalid_argument("--max-connections must be at least 1");
  if (c.header_timeout == 0 || c.header_timeout > 3600) throw std::invalid_argument("--header-timeout must be 1..3600 seconds");
  if (c.idle_timeout == 0 || c.idle_timeout > 3600) throw std::invalid_argument("--idle-timeout must be 1..3600 seconds");
  if (c.live_buffer_kib < 256) throw std::invalid_argument("--live-buffer-kib must be at least 256");
  return c;
}

}  // namespace vod::proxy
