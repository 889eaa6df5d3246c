// SPDX-License-Identifier: LGPL-2.1-or-later
// One HTTP/1.1 client of the proxy: reads requests (with header and body limits, and timeouts),
// checks the Host (HostAllowList), answers each from route() and, for movies, streams the byte
// range from RDMA Reads. Two blocks of one chunk each are in flight per response: the next Read is
// issued only when the socket has taken a block, so a paused player stops the Reads for its
// response, and memory stays bounded. The blocks exist only while a movie body is being sent: an
// idle connection holds no block. A live channel's response subscribes to the channel's LiveHub.
//
// The states of a connection:
//   waiting     no byte of the next request yet. A new connection waits at most --header-timeout
//               (from its accept), a kept-alive one --idle-timeout; then it is closed without an
//               answer. Nothing is allocated for the request while waiting.
//   header      the request's first byte arrived: the whole header must follow by --header-timeout
//               (from the accept for the first request, from the first byte for later ones), else
//               408 and close.
//   responding  the response is written, with the stall timeout per write; then back to waiting
//               (kept alive) or closed.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <array>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "connection_slots.hpp"
#include "hls_service.hpp"
#include "host_allow_list.hpp"
#include "live_hls_service.hpp"
#include "live_hub.hpp"
#include "proxy_metrics.hpp"
#include "range_blocks.hpp"
#include "rdma_pool.hpp"
#include "request_path.hpp"
#include "request_router.hpp"
#include "thumbnail_service.hpp"
#include "vod/client/buffer_pool.hpp"
#include "web_pages.hpp"

namespace vod::proxy {

// Set from ProxyConfig by main (its defaults are the only ones), except the stall timeout.
struct ConnectionLimits {
  std::size_t header_bytes = 0;            // --header-limit
  std::size_t chunk_bytes = 0;             // --chunk-kib: one body block
  std::chrono::seconds header_timeout{0};  // --header-timeout
  std::chrono::seconds idle_timeout{0};    // --idle-timeout
  std::chrono::seconds stalled{300};       // a client that stops reading a response (a long pause)
  std::size_t live_send_buffer = 0;        // SO_SNDBUF of a live response (live_send_buffer_for); 0: the kernel's
};

// What every connection of the proxy shares; owned by main.
struct Services {
  RdmaPool& pool;
  ProxyMetrics& metrics;
  const WebPages& pages;
  ThumbnailService& thumbnails;
  HlsService& hls;
  const std::vector<std::string>& cors_origins;
  const HostAllowList& hosts;
  LiveHubs& live;
  LiveHlsService& live_hls;
};

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(boost::asio::ip::tcp::socket socket, const Services& services, const ConnectionLimits& limits, std::string default_host,
                 ConnectionSlots::Slot slot);
  ~HttpConnection();
  void start();

 private:
  void wait_for_request();
  void on_readable(boost::beast::error_code ec);
  void read_header();
  void arm_deadline(std::chrono::steady_clock::time_point when);
  void disarm_deadline();
  void on_request(boost::beast::error_code ec);
  void respond(Plan plan, const std::string& method);
  void respond_with_picture(Plan plan, const std::string& method, std::uint32_t generation);
  void respond_with_playlist(Plan plan, const std::string& method, std::uint32_t generation);
  void respond_with_live_hls(Plan plan, const std::string& method);
  void fill_blocks();
  void write_ready_block();
  void start_live();
  void relay_live();
  void watch_live_client();
  void end_live(const std::string& why);
  void abort_stream(const std::string& why);
  void finish();
  void close() noexcept;
  void log_access(unsigned status, std::uint64_t bytes);

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::empty_body>> parser_;
  RdmaPool& pool_;
  ProxyMetrics& metrics_;
  const WebPages& pages_;
  ThumbnailService& thumbnails_;
  HlsService& hls_;
  const std::vector<std::string>& cors_origins_;
  const HostAllowList& hosts_;
  LiveHubs& live_hubs_;
  LiveHlsService& live_hls_;
  ConnectionLimits limits_;
  std::string default_host_, peer_;
  ConnectionSlots::Slot slot_;  // one of --max-connections, for as long as this connection lives

  // The request being read (waiting, then header).
  bool first_request_ = true;
  std::chrono::steady_clock::time_point accepted_;
  boost::asio::steady_timer deadline_;  // the waiting and header timeouts
  std::uint64_t deadline_generation_ = 0;
  bool timed_out_ = false;

  // The response being sent.
  Plan plan_;
  std::string request_line_, range_;
  bool keep_alive_ = false, writing_ = false;
  std::chrono::steady_clock::time_point started_;
  std::shared_ptr<boost::beast::http::response<boost::beast::http::empty_body>> header_;
  RangeBlocks blocks_;           // a movie's range
  std::uint64_t live_sent_ = 0;  // a live channel's bytes written
  // A live channel's response: a viewer of the channel's hub, one chunk in flight, chunked for
  // HTTP/1.1; the client's side is read meanwhile only to notice that it went away.
  std::unique_ptr<LiveViewer> live_;
  bool live_ended_ = false;
  std::array<char, 64> live_sink_{};
  std::shared_ptr<boost::beast::http::response_serializer<boost::beast::http::empty_body>> live_header_;
  bool chunked_ = false;
  unsigned http_version_ = 11;
};

}  // namespace vod::proxy
