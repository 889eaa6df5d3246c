// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-proxy's TCP listener: accepts forever, and hands each connection to an HttpConnection that
// holds one of --max-connections slots. A connection accepted when every slot is taken is answered
// "503 Service Unavailable" at once without reading its request, and closed (after the client has
// had a second to read the answer); it is counted in /metrics and logged at warn at most every
// 10 s. A transient accept failure (no file descriptors left, an aborted connection) is logged and
// retried after a pause instead of ending the loop.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/asio.hpp>
#include <memory>
#include <string>
#include <vector>

#include "connection_slots.hpp"
#include "http_connection.hpp"

namespace vod::proxy {

class Listener {
 public:
  // Throws boost::system::system_error when it cannot listen on `at`.
  Listener(boost::asio::io_context& io, boost::asio::ip::tcp::endpoint at, const Services& services, const ConnectionLimits& limits,
           std::size_t max_connections);
  void accept();
  void close();
  std::string address() const { return host_; }

 private:
  void refuse(boost::asio::ip::tcp::socket socket);

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer retry_;
  Services services_;
  ConnectionLimits limits_;
  std::string host_;
  ConnectionSlots slots_;
  ConnectionSlots refusing_;  // refusals still being answered: bounded too
  RateLimitedCount refusal_log_;
  std::shared_ptr<const std::string> busy_answer_;
};

// This host's addresses (every interface, IPv4 and IPv6) and its hostname: the names a wildcard
// --listen (0.0.0.0, ::) is reached by, for the Host allow-list.
std::vector<std::string> host_addresses();
std::string host_name();

}  // namespace vod::proxy
