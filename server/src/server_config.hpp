// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-server's settings, from the command line and an optional config file (Boost.Program_options,
// same option names in both). Defaults are defined here once, so --help, the docs and the code agree.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "live/source_spec.hpp"
#include "vod/cluster/etcd_url.hpp"
#include "vod/defaults.hpp"

namespace vod::server {

struct ServerConfig {
  std::string media_dir;
  std::string bind = "0.0.0.0";
  std::uint16_t port = defaults::kRdmaPort;
  std::string device;  // serve only on this RDMA device; empty = every device
  unsigned max_clients = 1024;
  int backlog = 128;
  std::string remux = "none";  // none | ts
  double drain_seconds = 30;   // after SIGTERM, how long connected clients may keep reading
  std::string log_level = "info";
  std::string log_format = "text";
  std::uint16_t metrics_port = 0;          // Prometheus /metrics over HTTP; 0: off
  std::string metrics_bind = "127.0.0.1";  // where /metrics listens, when on
  std::string auth_secret;                 // keys file: every connect needs a token (docs/security.md); empty: off
  // With --auth-secret: how each connection is kept to what its token granted (windows/isolation.hpp,
  // docs/security.md): auto, windows, pd or shared. --no-memory-windows is --isolation shared.
  std::string isolation = "auto";
  // --isolation pd: the memory all connections' own registrations may pin at once; a connect beyond
  // it is refused (server full), saying so.
  std::uint64_t isolation_memory = 8ull << 30;
  std::string revoked;          // revocation file (keys, tokens, clients), re-read on SIGHUP; empty: none
  double connect_rate = 0;      // RDMA connects per second per client address; 0: no limit
  double connect_burst = 10;    // connects an idle address may make at once
  unsigned max_per_source = 0;  // connections per client address at once; 0: no limit
  // Live channels (docs/live.md): NAME=SOURCE each.
  std::vector<std::string> live;
  double live_buffer_seconds = 4;  // ring size in seconds of the channel's bitrate (--live-buffer: a duration)
  double live_bitrate_mbps = 8;    // assumed for sources whose bitrate is unknown before they run
  std::string live_multicast;      // GROUP[:PORT]: every live record to this group too (Write-Record); empty: off
  std::string live_multicast_interface;
  int live_multicast_ttl = 1;
  unsigned live_multicast_payload = defaults::kLiveMulticastPayload;
  // --live-record (docs/live.md, "Recordings"): every channel as MPEG-TS files in the media directory.
  bool live_record = false;
  std::chrono::milliseconds live_record_split{std::chrono::hours(1)};  // files are cut this often (0: once per stream)
  std::uint64_t live_record_keep = 0;                                  // bytes of recordings kept (0: no limit)
  // --live-dvr (docs/live.md, "The DVR window"): each channel's last minutes on disk, read one-sided.
  std::chrono::milliseconds live_dvr{0};       // 0: off
  std::string live_dvr_dir;                    // default: STATE-DIR/dvr
  std::uint64_t live_dvr_size = 0;             // a window's bytes at most (0: its duration at 1.5 x the channel's bitrate)
  std::uint64_t live_dvr_cache = 64ull << 20;  // the segment cache the windows are read from, without --cache-size
  // UDP Write-Record (docs/write-record.md): off unless a port is given.
  std::uint16_t udp_port = 0;                                       // 0: off; the documented port is 7471
  double udp_max_rate_mbps = 1000;                                  // the whole server
  double udp_client_rate_mbps = defaults::kUdpClientRateBps / 1e6;  // one client address
  unsigned udp_max_payload = defaults::kUdpMaxPayload;              // bytes per datagram at most (clients ask for their path MTU's)
  bool udp_zero_copy = false;                                       // MSG_ZEROCOPY sends of loaded movies' bytes (udp/zero_copy_sends.hpp)
  bool no_rdma = false;                                             // serve UDP only: no RDMA device needed
  // The segment cache (docs/segment-cache.md): off unless --cache-size is given, and then every
  // movie not pinned is served from it.
  std::uint64_t cache_size = 0;
  std::uint32_t segment_size = 4u << 20;
  std::vector<std::string> pin;            // shell patterns of movie names loaded whole
  std::uint64_t pin_budget = 0;            // bytes pinned movies may take, beside the cache; 0: no limit
  unsigned cache_grace_ms = 2000;          // a segment asked for within this is never evicted
  unsigned probe_budget_ms = 2000;         // the scan's time for probing cached movies; the rest after start
  unsigned cache_read_deadline_ms = 3000;  // clients drop a segment Read older than this; slots wait longer
  // An HTTP origin (docs/operations.md, "Edges of an origin"): the library is listed from it and
  // every segment filled from it by Range requests; --cache-size is needed, --media-dir is not.
  std::string origin;
  std::string origin_cacert;                    // CAs an https origin is checked against (else the system's)
  unsigned origin_timeout_ms = 8000;            // one request to the origin, start to end
  unsigned origin_rescan_s = 60;                // the origin is listed again this often (0: only at SIGHUP and when a fill finds a change)
  std::string state_dir = "/var/lib/rdma-vod";  // what the server derives from files and keeps (cached movies' indexes); empty: nothing
  // A fleet (docs/operations.md, "A fleet"): a member record in etcd under a lease.
  std::string cluster;                      // etcd://HOST[:PORT][/PREFIX]; empty: not in a fleet
  cluster::EtcdSecurity etcd;               // --etcd-*: TLS and authentication
  std::string advertise;                    // ADDR[:PORT] clients connect to; default --bind:--port unless --bind is a wildcard
  double cluster_weight = 1;                // relative capacity, for placement
  unsigned cluster_ttl = 10;                // seconds: a dead server drops out of the fleet within this
  std::vector<std::string> cluster_spread;  // NAME=K: a popular movie placed on the top K servers
  // Parsed once, by parse_server_config: --live's channels and --cluster-spread's NAME=K.
  std::vector<live::ChannelConfig> live_channels;
  std::map<std::string, unsigned> spread;
  unsigned test_evict_every_ms = 0;      // a test hook: evict the slot last asked for (else the newest filled) this often (hidden)
  std::string udp_test_drop;             // a test hook: datagrams to drop on purpose (hidden from --help)
  unsigned test_fail_binds = 0;          // a test hook: every Nth connection's window binds fail at the device (hidden)
  unsigned test_fail_notifications = 0;  // a test hook: every Nth segment notification post is refused (hidden)
};

// Parses argv (and --config FILE). Returns nullopt after printing --help. Throws
// std::invalid_argument with a message naming the option for anything invalid.
std::optional<ServerConfig> parse_server_config(int argc, char** argv);

}  // namespace vod::server
