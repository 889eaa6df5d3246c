// SPDX-License-Identifier: LGPL-2.1-or-later
// The proxy's whole request path from a parsed HTTP request to the plan of its answer, without a
// socket: the fields it reads, the Host check, /metrics, the pages' static files, then route() over
// the server's catalog. HttpConnection runs it for every request, and the fuzz_proxy_request target
// runs it on arbitrary bytes parsed by the same Beast parser with the same limits.
#pragma once

#include <utility>  // first: Boost.Asio 1.74's awaitable.hpp uses std::exchange without including it

#include <boost/beast/http.hpp>
#include <functional>
#include <string>
#include <vector>

#include "host_allow_list.hpp"
#include "request_router.hpp"
#include "web_pages.hpp"

namespace vod::proxy {

using HttpRequest = boost::beast::http::request<boost::beast::http::empty_body>;

// The request fields the proxy acts on.
Request request_of(const HttpRequest& req);

// What the path needs besides the request. `catalog` may throw (the server is away): the answer is
// then a 502 saying why. `metrics` renders /metrics.
struct RequestContext {
  const HostAllowList& hosts;
  const WebPages& pages;
  std::string default_host;
  std::string server;
  std::function<const proto::Catalog&()> catalog;
  std::function<std::string()> metrics;
  // Why the catalog is stale (the server has not answered its last read), or nullopt.
  std::function<std::optional<std::string>()> stale = [] { return std::optional<std::string>(); };
  // --cors-origin: the origins allowed to read responses (null or empty: CORS is off).
  const std::vector<std::string>* cors_origins = nullptr;
};

struct RequestAnswer {
  Plan plan;
  std::uint32_t generation = 0;  // of the catalog the plan was made from (0: none was read)
  bool close = false;            // the connection must close after it (a refused Host)
};

// Throws only what route() or the pages throw on a bug (the fuzzer treats that as a failure; the
// connection answers 500).
RequestAnswer answer(const HttpRequest& req, const RequestContext& context);
// answer() before the CORS headers (which answer() adds to every answer when --cors-origin is set).
RequestAnswer answer_unshared(const HttpRequest& req, const RequestContext& context);

// The parser's limits, shared by the connection and the fuzzer: a header of at most
// `header_bytes`, and no body (GET and HEAD carry none).
void limit_parser(boost::beast::http::request_parser<boost::beast::http::empty_body>& parser, std::size_t header_bytes);

}  // namespace vod::proxy
