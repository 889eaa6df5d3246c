// vod-server's settings, from the command line and an optional config file (Boost.Program_options,
// same option names in both). Defaults are defined here once, so --help, the docs and the code agree.
#pragma once

#include <boost/program_options.hpp>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vod::server {

struct ServerConfig {
  std::string media_dir;
  std::string bind = "0.0.0.0";
  std::uint16_t port = 7470;
  std::string device;        // serve only on this RDMA device; empty = every device
  unsigned max_clients = 1024;
  int backlog = 128;
  std::string remux = "none";  // none | ts
  double drain_seconds = 30;   // after SIGTERM, how long connected clients may keep reading
  std::string log_level = "info";
  // Live channels (docs/live.md): NAME=SOURCE each.
  std::vector<std::string> live;
  double live_buffer_seconds = 4;     // ring size in seconds of the channel's bitrate
  double live_bitrate_mbps = 8;       // assumed for sources whose bitrate is unknown before they run
};

// Parses argv (and --config FILE). Returns nullopt after printing --help. Throws
// std::invalid_argument with a message naming the option for anything invalid.
std::optional<ServerConfig> parse_server_config(int argc, char** argv);

}  // namespace vod::server
