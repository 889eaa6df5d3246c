// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy's settings (Boost.Program_options, command line and config file, same names). The
// defaults are these initialisers, and nowhere else: --help shows them, main passes them on.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "vod/client/session.hpp"
#include "vod/defaults.hpp"

namespace vod::proxy {

struct ProxyConfig {
  std::string server;          // rdma://host[:port]
  std::string cluster;         // --cluster etcd://...: the same as --server with that URL
  cluster::EtcdSecurity etcd;  // --etcd-*: TLS and authentication for the fleet's etcd
  std::string listen = "127.0.0.1:8080";
  bool allow_remote = false;  // required to listen on anything but loopback
  unsigned chunk_kib = defaults::kChunkBytes / 1024;
  unsigned depth = defaults::kReadDepth;
  double reconnect_for = std::chrono::duration<double>(defaults::kProxyReconnectFor).count();
  // A 1024-byte path of non-ASCII names is about 3 KiB percent-encoded, and a request line and a
  // Referer may both carry one: 16 KiB leaves room for both and the usual headers.
  std::size_t header_limit = 16384;
  std::size_t max_connections = 1024;     // HTTP connections open at once; more are answered 503 and closed
  unsigned header_timeout = 10;           // seconds for a whole request header (from the connection, or from its first byte)
  unsigned idle_timeout = 15;             // seconds a kept-alive connection may wait for its next request
  unsigned stall_timeout = 300;           // seconds a response may wait for its client to take more bytes
  std::vector<std::string> cors_origins;  // --cors-origin: the origins whose pages may read responses (none by default)
  std::vector<std::string> allow_hosts;   // Host names answered besides loopback and the listen address
  unsigned live_buffer_kib = 4096;        // each live channel's recent bytes kept for its viewers
  std::string log_level = "info";
  std::string log_format = "text";
  std::string transport = "rdma";  // rdma, or udp (Write-Record: no RDMA device on this host)
  unsigned udp_port = defaults::kUdpPort;
  std::string udp_group;  // live channels with --transport udp: the server's --live-multicast group
  std::string udp_interface;
  std::string web_dir;  // empty: WebPages::default_dir()
  unsigned thumbnail_width = 320;
  double hls_segment_seconds = 4;       // the target duration movies' HLS segments are cut to, at keyframes
  unsigned hls_cache_mib = 64;          // fMP4 segments remuxed for HLS, kept for the next viewer
  double hls_live_segment_seconds = 2;  // live channels' HLS segments, cut at keyframes
  double hls_part_seconds = 0.5;        // and their LL-HLS parts
  unsigned hls_live_window = 6;         // complete segments in a live playlist
  unsigned hls_live_idle = 30;          // seconds without a request before a channel's packaging stops
  std::string zero_copy = "auto";       // --zero-copy auto|off: body blocks' Reads land in them directly, or through the ring
  std::size_t zero_copy_buffers = 256;  // registered body blocks at most (each --chunk-kib); beyond, plain memory, copied
};

// Returns nullopt after --help; throws std::invalid_argument naming the bad option.
std::optional<ProxyConfig> parse_proxy_config(int argc, char** argv);

}  // namespace vod::proxy
