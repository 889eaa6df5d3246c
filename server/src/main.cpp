// vod-server: a stateless video-on-demand server over one-sided RDMA Read.
#include <cstdio>
#include <exception>

#include "server_config.hpp"
#include "vod/log.hpp"
#include "vod/rdma/error.hpp"
#include "vod_server.hpp"

int main(int argc, char** argv) {
  using namespace vod;
  std::optional<server::ServerConfig> config;
  try {
    config = server::parse_server_config(argc, argv);
    if (!config) return 0;
    log::set_level(log::parse_level(config->log_level));
    log::set_format(log::parse_format(config->log_format));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vod-server: %s\n", e.what());
    return 2;
  }
  try {
    server::VodServer server(*config);
    return server.run();
  } catch (const rdma::NoDeviceError& e) {
    log::error("server", e.what());
    return 3;
  } catch (const std::exception& e) {
    log::error("server", e.what());
    return 1;
  }
}
