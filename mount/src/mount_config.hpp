// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-mount's settings (Boost.Program_options). The same settings can also come as -o options, as
// they do from /etc/fstab through mount.fuse3 (`-o refresh=5,page-cache=off`). -o options that are
// not vod-mount's own go to libfuse unchanged (allow_other, default_permissions, max_read, ...).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "vod/cluster/etcd_url.hpp"
#include "vod/defaults.hpp"

namespace vod::mount {

struct MountConfig {
  std::string server;  // rdma://host[:port]
  std::string mountpoint;
  cluster::EtcdSecurity etcd;                         // --etcd-*: TLS and authentication for a fleet's etcd
  bool foreground = false;                            // -f: stay in the foreground (logs to stderr)
  bool debug = false;                                 // -d: libfuse's debug output; implies -f
  bool single_thread = false;                         // -s: one FUSE thread
  std::vector<std::string> fuse_options;              // -o options for libfuse, one per element
  double refresh = 5;                                 // seconds a catalog (directory listing, sizes) is trusted
  unsigned sessions = 4;                              // connections per movie at most, shared by its open files
  double idle_close = 60;                             // seconds an unused connection stays open
  bool page_cache = true;                             // the kernel caches file pages (off: direct I/O, no kernel read-ahead)
  unsigned readahead_kib = 4096;                      // vod-mount's own read-ahead per sequential reader (into the ring)
  bool zero_copy = true;                              // --zero-copy auto: reads land in registered buffers, replies go from them
  unsigned zero_copy_buffers = 256;                   // registered 128 KiB buffers out at once, all reads together
  unsigned chunk_kib = defaults::kChunkBytes / 1024;  // bytes per RDMA Read
  unsigned depth = defaults::kReadDepth;              // RDMA Reads in flight per connection at most
  double reconnect_for =
      std::chrono::duration<double>(defaults::kReconnectFor).count();  // seconds to keep reconnecting before reads fail with EIO
  double connect_timeout = std::chrono::duration<double>(defaults::kConnectTimeout).count();
  std::string transport = "rdma";  // or udp (Write-Record: no RDMA device here)
  unsigned udp_port = defaults::kUdpPort;
  std::string log_level = "info";
  std::string log_format = "text";
  std::string log_file;  // in the background: where log lines go (default: nowhere)
};

// Parses vod-mount's command line (argv without the program name). Returns nullopt when --help or
// --version printed something; throws std::invalid_argument naming what is wrong.
std::optional<MountConfig> parse_mount_config(const std::vector<std::string>& args);

// The options vod-mount passes to fuse_new(): its defaults (read-only, fsname, subtype) and the
// user's -o options that are not its own.
std::vector<std::string> fuse_arguments(const MountConfig& config);

}  // namespace vod::mount
