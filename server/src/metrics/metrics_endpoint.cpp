// SPDX-License-Identifier: LGPL-2.1-or-later
#include "metrics/metrics_endpoint.hpp"

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <boost/beast.hpp>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "vod/log.hpp"
#include "vod/metrics_text.hpp"

namespace vod::server {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kHeaderLimit = 4096;
constexpr std::chrono::seconds kTimeout{10};
// Connections served at once; more are closed on accept, so that a flood of scrapers cannot take the
// file descriptors the RDMA side needs.
constexpr std::size_t kMaxScrapers = 16;

// One scraper's connection: requests in turn (keep-alive), each answered from render().
class Scrape : public std::enable_shared_from_this<Scrape> {
 public:
  Scrape(tcp::socket socket, const std::function<std::string()>& render, std::size_t& open)
      : stream_(std::move(socket)), render_(render), open_(open) {
    ++open_;
  }
  ~Scrape() { --open_; }

  void read() {
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(0);
    stream_.expires_after(kTimeout);
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

 private:
  void on_read(beast::error_code ec) {
    if (ec) {
      if (ec != http::error::end_of_stream && ec != beast::error::timeout) log::debug("metrics", "request dropped: " + ec.message());
      return close();
    }
    const auto& request = parser_->get();
    auto& response = response_.emplace();
    response.version(request.version());
    response.keep_alive(request.keep_alive());
    response.set(http::field::server, "vod-server");
    const bool get = request.method() == http::verb::get, head = request.method() == http::verb::head;
    const std::string_view target(request.target().data(), request.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    if (!get && !head) {
      response.result(http::status::method_not_allowed);
      response.set(http::field::allow, "GET, HEAD");
      response.set(http::field::content_type, "text/plain");
      response.body() = "only GET and HEAD are served here\n";
    } else if (path != "/metrics") {
      response.result(http::status::not_found);
      response.set(http::field::content_type, "text/plain");
      response.body() = "vod-server serves its metrics at /metrics\n";
    } else {
      response.result(http::status::ok);
      response.set(http::field::content_type, metrics::kContentType);
      response.body() = render_();
    }
    response.prepare_payload();
    if (head) response.body().clear();  // Content-Length stays that of the GET
    stream_.expires_after(kTimeout);
    http::async_write(stream_, response, [self = shared_from_this()](beast::error_code write_ec, std::size_t) {
      if (write_ec || !self->response_->keep_alive()) return self->close();
      self->read();
    });
  }

  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::empty_body>> parser_;
  std::optional<http::response<http::string_body>> response_;
  const std::function<std::string()>& render_;
  std::size_t& open_;
};

}  // namespace

struct MetricsEndpoint::State {
  std::function<std::string()> render;  // first: outlive the handlers the io_context destroys
  std::size_t open = 0;                 // Scrape objects alive
  asio::io_context io{1};
  tcp::acceptor acceptor{io};

  void accept() {
    acceptor.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (ec == asio::error::operation_aborted) return;
      if (!ec && open >= kMaxScrapers) {
        log::debug("metrics", "refusing a connection: " + std::to_string(open) + " scrapers connected already");
        beast::error_code ignored;
        socket.close(ignored);
      } else if (!ec) {
        std::make_shared<Scrape>(std::move(socket), render, open)->read();
      }
      accept();
    });
  }
};

MetricsEndpoint::MetricsEndpoint(const std::string& address, std::uint16_t port, std::function<std::string()> render)
    : state_(std::make_unique<State>()) {
  state_->render = std::move(render);
  beast::error_code ec;
  const auto ip = asio::ip::make_address(address, ec);
  if (ec) throw std::runtime_error("--metrics-bind " + address + ": not an IP address (" + ec.message() + ")");
  const tcp::endpoint at(ip, port);
  auto& acceptor = state_->acceptor;
  if (acceptor.open(at.protocol(), ec); !ec) acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor.bind(at, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error("metrics: cannot listen on " + address + ":" + std::to_string(port) + ": " + ec.message() +
                             " (choose another --metrics-port)");
  port_ = acceptor.local_endpoint().port();
  state_->accept();
  thread_ = std::thread([state = state_.get()] { state->io.run(); });
  log::info("metrics", "Prometheus metrics on http://" + address + ":" + std::to_string(port_) + "/metrics");
}

MetricsEndpoint::~MetricsEndpoint() {
  state_->io.stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace vod::server
