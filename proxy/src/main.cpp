// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy: the client-local HTTP-to-RDMA proxy. Any HTTP player plays and seeks (Range requests)
// movies that it reads from a vod-server by one-sided RDMA Read.
#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <csignal>
#include <cstdio>

#include "host_allow_list.hpp"
#include "http_connection.hpp"
#include "listener.hpp"
#include "live_hub.hpp"
#include "proxy_config.hpp"
#include "rdma_pool.hpp"
#include "vod/log.hpp"

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

tcp::endpoint parse_listen(const std::string& text, bool allow_remote) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) throw std::invalid_argument("--listen must be address:port, e.g. 127.0.0.1:8080");
  std::string host = text.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (ec) throw std::invalid_argument("--listen address '" + host + "' is not an IP address");
  const unsigned long port = std::strtoul(text.substr(colon + 1).c_str(), nullptr, 10);
  if (port == 0 || port > 65535) throw std::invalid_argument("--listen port must be 1..65535");
  if (!address.is_loopback()) {
    if (!allow_remote)
      throw std::invalid_argument("--listen " + text +
                                  " is not a loopback address: the proxy is client-local; add --allow-remote to serve other hosts");
    vod::log::warn("proxy", "listening on " + text + ", reachable from other hosts (--allow-remote)");
  }
  return {address, static_cast<unsigned short>(port)};
}

// Room for --max-connections sockets besides the sessions' and the refusals': the soft limit on
// open files is raised toward the hard one when it is lower. Returns a warning when it cannot be.
std::string ensure_file_limit(std::size_t max_connections) {
  const rlim_t wanted = static_cast<rlim_t>(max_connections) + 256;
  rlimit l{};
  if (getrlimit(RLIMIT_NOFILE, &l) != 0 || l.rlim_cur >= wanted) return "";
  l.rlim_cur = l.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, l.rlim_max);
  setrlimit(RLIMIT_NOFILE, &l);
  getrlimit(RLIMIT_NOFILE, &l);
  if (l.rlim_cur >= wanted) return "";
  return "the open-file limit is " + std::to_string(l.rlim_cur) + ", too low for --max-connections " + std::to_string(max_connections) +
         " (it needs about " + std::to_string(wanted) +
         "): accepts will fail before the cap; raise LimitNOFILE (ulimit -n) or lower --max-connections";
}

// The proxy's io_context, able to destroy the handlers it still holds once run() has returned.
// asio does that only in ~io_context, which runs after everything declared below it in main() is
// gone; the handlers hold shared_ptrs to HTTP connections whose destructors use those objects.
class EventLoop : public asio::io_context {
 public:
  void drop_pending_handlers() { shutdown(); }  // execution_context::shutdown: idempotent
};

}  // namespace

int main(int argc, char** argv) {
  using namespace vod;
  std::optional<proxy::ProxyConfig> config;
  client::Uri server;
  tcp::endpoint at;
  std::optional<proxy::HostAllowList> hosts;
  try {
    config = proxy::parse_proxy_config(argc, argv);
    if (!config) return 0;
    log::set_level(log::parse_level(config->log_level));
    log::set_format(log::parse_format(config->log_format));
    server = client::parse_server_uri(config->server);
    if (server.movie)
      throw std::invalid_argument("--server names a server or a fleet, not a movie: rdma://host[:port] or etcd://host:2379");
    at = parse_listen(config->listen, config->allow_remote);
    const bool wildcard = at.address().is_unspecified();
    hosts = proxy::allowed_hosts_for(at.address().to_string(), config->allow_hosts,
                                     wildcard ? proxy::host_addresses() : std::vector<std::string>{},
                                     wildcard ? proxy::host_name() : std::string());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vod-proxy: %s\n", e.what());
    return 2;
  }
  std::optional<proxy::WebPages> pages;
  try {
    pages = proxy::WebPages::load(config->web_dir.empty() ? proxy::WebPages::default_dir() : std::filesystem::path(config->web_dir));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vod-proxy: %s\n", e.what());
    return 2;
  }
  std::signal(SIGPIPE, SIG_IGN);
  EventLoop io;
  client::SessionOptions options;
  options.engine.chunk_size = std::size_t{config->chunk_kib} * 1024;
  options.engine.read_depth = config->depth;
  options.engine.readahead_bytes = 0;  // Reads are issued per response as its client drains them
  options.engine.direct = config->zero_copy == "auto";
  options.reconnect.give_up_after = std::chrono::milliseconds(static_cast<long>(config->reconnect_for * 1000));
  if (config->transport == "udp") options.transport = client::Transport::udp;
  options.udp.port = static_cast<std::uint16_t>(config->udp_port);
  proxy::RdmaPool pool(io, server, options, config->zero_copy_buffers);
  pool.set_multicast(config->udp_group, config->udp_interface);
  try {
    pool.read_catalog_now();  // before serving: the one wait on the server the proxy makes on this thread
    const auto& c = pool.catalog();
    log::info("proxy", "vod-server " + server.to_string() + ": catalog generation " + std::to_string(c.generation) + ", " +
                           std::to_string(c.entries.size()) + " movies");
  } catch (const client::ClientError& e) {
    if (e.kind() == client::ErrorKind::no_device) {
      log::error("proxy", e.what());
      return 3;
    }
    log::warn("proxy", std::string("the vod-server is not available yet (requests get 502 until it is): ") + e.what());
  }
  proxy::ProxyMetrics metrics;
  proxy::ThumbnailSettings pictures;
  pictures.server = server;
  pictures.session = options;
  pictures.session.engine.readahead_bytes = 0;
  pictures.session.reconnect.give_up_after = std::chrono::seconds(3);  // a picture is not worth waiting 30 s for
  pictures.live = pool.live_options();
  pictures.live.reconnect.give_up_after = std::chrono::seconds(3);
  if (!config->udp_group.empty()) pictures.multicast = pool.multicast_options();
  pictures.picture.width = config->thumbnail_width;
  proxy::ThumbnailService thumbnails(io, pictures);
  proxy::HlsSettings hls_settings;
  hls_settings.server = server;
  hls_settings.session = pictures.session;
  hls_settings.target_us = static_cast<std::uint64_t>(config->hls_segment_seconds * 1e6);
  hls_settings.cache_bytes = std::size_t{config->hls_cache_mib} << 20;
  proxy::HlsService hls(io, hls_settings);
  proxy::LiveHubSettings live_settings;
  live_settings.backlog_bytes = std::size_t{config->live_buffer_kib} * 1024;
  live_settings.read_bytes = std::size_t{config->chunk_kib} * 1024;
  proxy::LiveHubs live(pool, metrics, live_settings);
  proxy::LiveHlsServiceSettings live_hls_settings;
  live_hls_settings.packaging.segment_seconds = config->hls_live_segment_seconds;
  live_hls_settings.packaging.part_seconds = config->hls_part_seconds;
  live_hls_settings.packaging.window_segments = config->hls_live_window;
  live_hls_settings.idle = std::chrono::seconds(config->hls_live_idle);
  proxy::LiveHlsService live_hls(io, live, live_hls_settings);  // after the hubs: it is a viewer of theirs
  proxy::ConnectionLimits limits;
  limits.header_bytes = config->header_limit;
  limits.chunk_bytes = std::size_t{config->chunk_kib} * 1024;
  limits.header_timeout = std::chrono::seconds(config->header_timeout);
  limits.idle_timeout = std::chrono::seconds(config->idle_timeout);
  limits.stalled = std::chrono::seconds(config->stall_timeout);
  limits.live_send_buffer = proxy::live_send_buffer_for(live_settings.backlog_bytes);
  if (const std::string warning = ensure_file_limit(config->max_connections); !warning.empty()) log::warn("proxy", warning);
  std::string names;
  for (const auto& name : hosts->names()) names += (names.empty() ? "" : " ") + name;
  log::info("proxy", "answering requests for Host " + names + " (and 127.0.0.0/8; more with --allow-host)");
  std::unique_ptr<proxy::Listener> listener;
  try {
    listener = std::make_unique<proxy::Listener>(
        io, at, proxy::Services{pool, metrics, *pages, thumbnails, hls, config->cors_origins, *hosts, live, live_hls}, limits,
        config->max_connections);
  } catch (const boost::system::system_error& e) {
    log::error("proxy", "cannot listen on " + config->listen + ": " + e.code().message());
    return 1;
  }
  listener->accept();
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](boost::system::error_code, int sig) {
    log::info("proxy", std::string("stopping on ") + (sig == SIGINT ? "SIGINT" : "SIGTERM"));
    listener->close();
    io.stop();
  });
  log::info("proxy", "listening on http://" + listener->address() + "/ for " + server.to_string());
  io.run();
  // The handlers still queued own HTTP connections, whose destructors give their reads back to the
  // pool and count themselves out of the metrics: they go now, while the pool, the hubs and the
  // metrics exist (the io_context itself goes after them all).
  listener.reset();
  io.drop_pending_handlers();
  pool.close();
  return 0;
}
