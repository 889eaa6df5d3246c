// One HTTP/1.1 client of the proxy: reads requests (with header and body limits, and timeouts),
// answers each from route() and, for movies, streams the byte range from RDMA Reads. Two blocks of
// one chunk each are in flight per response: the next Read is issued only when the socket has taken
// a block, so a paused player stops the Reads for its response, and memory stays bounded.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it
#include <array>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "live_relay.hpp"
#include "proxy_metrics.hpp"
#include "rdma_pool.hpp"
#include "request_router.hpp"
#include "thumbnail_service.hpp"
#include "web_pages.hpp"

namespace vod::proxy {

struct ConnectionLimits {
  std::size_t header_bytes = 8192;
  std::size_t chunk_bytes = 256 * 1024;
  std::chrono::seconds idle{60};         // waiting for a request
  std::chrono::seconds stalled{300};     // a client that stops reading a response (a long pause)
};

// What every connection of the proxy shares; owned by main.
struct Services {
  RdmaPool& pool;
  ProxyMetrics& metrics;
  const WebPages& pages;
  ThumbnailService& thumbnails;
};

class HttpConnection : public std::enable_shared_from_this<HttpConnection> {
 public:
  HttpConnection(boost::asio::ip::tcp::socket socket, const Services& services, const ConnectionLimits& limits, std::string default_host);
  ~HttpConnection();
  void start();

 private:
  struct Block {
    std::vector<std::uint8_t> data;
    std::uint64_t offset = 0;
    std::size_t length = 0;
    std::uint64_t read_id = 0;
    bool busy = false, ready = false;
  };

  void read_request();
  void on_request(boost::beast::error_code ec);
  void respond(Plan plan, const std::string& method);
  void respond_with_picture(Plan plan, const std::string& method, std::uint32_t generation);
  void fill_blocks();
  void write_ready_block();
  void start_live();
  void relay_live();
  void abort_stream(const std::string& why);
  void finish();
  void log_access(unsigned status, std::uint64_t bytes);

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::empty_body>> parser_;
  RdmaPool& pool_;
  ProxyMetrics& metrics_;
  const WebPages& pages_;
  ThumbnailService& thumbnails_;
  ConnectionLimits limits_;
  std::string default_host_, peer_;

  // The response being sent.
  Plan plan_;
  std::string request_line_, range_;
  bool keep_alive_ = false, writing_ = false;
  std::chrono::steady_clock::time_point started_;
  std::shared_ptr<boost::beast::http::response<boost::beast::http::empty_body>> header_;
  std::uint64_t next_read_ = 0, next_write_ = 0, end_ = 0;
  std::array<Block, 2> blocks_;
  // A live channel's response: one relay, one block in flight, chunked for HTTP/1.1.
  std::shared_ptr<LiveRelay> live_;
  std::shared_ptr<boost::beast::http::response_serializer<boost::beast::http::empty_body>> live_header_;
  bool chunked_ = false;
  unsigned http_version_ = 11;
};

}  // namespace vod::proxy
