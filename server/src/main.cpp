// vod-server: a stateless video-on-demand server over one-sided RDMA Read.
#include <sys/resource.h>

#include <cstdio>
#include <exception>
#include <string>

#include "server_config.hpp"
#include "vod/log.hpp"
#include "vod/rdma/error.hpp"
#include "vod_server.hpp"

namespace {

// The soft limit of open files raised to the hard one at start, as nginx's worker_rlimit_nofile
// does: 1024 by default, and sockets, devices, the io_uring and the segment cache's files share it.
void raise_open_files_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= r.rlim_max) return;
  const rlim_t was = r.rlim_cur;
  r.rlim_cur = r.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &r) == 0)
    vod::log::info("server", "open files limit raised from " + std::to_string(was) + " to " +
                                 (r.rlim_max == RLIM_INFINITY ? std::string("unlimited") : std::to_string(r.rlim_max)) +
                                 " (RLIMIT_NOFILE's hard limit)");
}

}  // namespace

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
  raise_open_files_limit();
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
