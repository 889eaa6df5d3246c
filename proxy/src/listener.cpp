// SPDX-License-Identifier: LGPL-2.1-or-later
#include "listener.hpp"

#include <ifaddrs.h>
#include <netinet/in.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "vod/log.hpp"

namespace vod::proxy {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr std::size_t kMaxRefusing = 64;                  // refusals lingering at once; beyond, closed at once
constexpr auto kRefusalLinger = std::chrono::seconds(1);  // a refused client's time to read the 503
constexpr auto kRefusalLogEvery = std::chrono::seconds(10);

// One refused connection: the 503 goes out, the send side is shut, and what the client sends is
// read and dropped until it closes or kRefusalLinger passes (closing with unread input would reset
// the connection and could destroy the 503 before the client reads it).
class Refusal : public std::enable_shared_from_this<Refusal> {
 public:
  Refusal(tcp::socket socket, std::shared_ptr<const std::string> answer, ConnectionSlots::Slot slot)
      : socket_(std::move(socket)), timer_(socket_.get_executor()), answer_(std::move(answer)), slot_(std::move(slot)) {}

  void start() {
    timer_.expires_after(kRefusalLinger);
    timer_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->close();
    });
    asio::async_write(socket_, asio::buffer(*answer_), [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
      if (ec) return self->close();
      boost::system::error_code ignored;
      self->socket_.shutdown(tcp::socket::shutdown_send, ignored);
      self->drain();
    });
  }

 private:
  void drain() {
    socket_.async_read_some(asio::buffer(sink_), [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
      if (ec) return self->close();
      self->drain();
    });
  }
  void close() {
    boost::system::error_code ignored;
    timer_.cancel();
    socket_.close(ignored);
  }

  tcp::socket socket_;
  asio::steady_timer timer_;
  std::shared_ptr<const std::string> answer_;
  ConnectionSlots::Slot slot_;
  std::array<char, 1024> sink_{};
};

std::string busy_answer(std::size_t max_connections) {
  const std::string body = "503 Service Unavailable: vod-proxy has " + std::to_string(max_connections) +
                           " connections open, its --max-connections; try again shortly, or start it with a higher --max-connections\n";
  return "HTTP/1.1 503 Service Unavailable\r\nServer: vod-proxy\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 1\r\n"
         "Connection: close\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

}  // namespace

Listener::Listener(asio::io_context& io, tcp::endpoint at, const Services& services, const ConnectionLimits& limits,
                   std::size_t max_connections)
    : acceptor_(io, at),
      retry_(io),
      services_(services),
      limits_(limits),
      host_((at.address().is_v6() ? "[" + at.address().to_string() + "]" : at.address().to_string()) + ":" + std::to_string(at.port())),
      slots_(max_connections),
      refusing_(kMaxRefusing),
      refusal_log_(kRefusalLogEvery),
      busy_answer_(std::make_shared<const std::string>(busy_answer(max_connections))) {}

void Listener::accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) {
      log::warn("proxy", "accept failed: " + ec.message() + "; retrying in 100 ms");
      retry_.expires_after(std::chrono::milliseconds(100));
      retry_.async_wait([this](boost::system::error_code wec) {
        if (!wec) accept();
      });
      return;
    }
    if (auto slot = slots_.try_take())
      std::make_shared<HttpConnection>(std::move(socket), services_, limits_, host_, std::move(*slot))->start();
    else refuse(std::move(socket));
    accept();
  });
}

void Listener::refuse(tcp::socket socket) {
  services_.metrics.connection_refused();
  if (const auto n = refusal_log_.note(std::chrono::steady_clock::now()))
    log::warn("proxy", "refused " + std::to_string(*n) + (*n == 1 ? " connection" : " connections") +
                           " with 503: " + std::to_string(slots_.max()) +
                           " are open (--max-connections); raise it if they are players, "
                           "else see who holds them (vod_proxy_http_connections in /metrics, ss -tn)");
  auto slot = refusing_.try_take();
  if (!slot) {
    boost::system::error_code ignored;
    socket.close(ignored);  // a flood: no time for an answer
    return;
  }
  std::make_shared<Refusal>(std::move(socket), busy_answer_, std::move(*slot))->start();
}

void Listener::close() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  retry_.cancel();
}

std::vector<std::string> host_addresses() {
  std::vector<std::string> out;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return out;
  const std::unique_ptr<ifaddrs, void (*)(ifaddrs*)> owner(list, freeifaddrs);
  for (const ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr) continue;
    if (i->ifa_addr->sa_family == AF_INET) {
      const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      asio::ip::address_v4::bytes_type b;
      std::memcpy(b.data(), &a->sin_addr, b.size());
      out.push_back(asio::ip::address_v4(b).to_string());
    } else if (i->ifa_addr->sa_family == AF_INET6) {
      const auto* a = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      if (a->sin6_scope_id != 0) continue;  // link-local: a Host cannot name it without a zone
      asio::ip::address_v6::bytes_type b;
      std::memcpy(b.data(), &a->sin6_addr, b.size());
      out.push_back("[" + asio::ip::address_v6(b).to_string() + "]");
    }
  }
  return out;
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "";
  return name.data();
}

}  // namespace vod::proxy
