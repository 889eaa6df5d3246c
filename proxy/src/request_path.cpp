// SPDX-License-Identifier: LGPL-2.1-or-later
#include "request_path.hpp"

#include "proxy_metrics.hpp"

namespace vod::proxy {

namespace http = boost::beast::http;

Request request_of(const HttpRequest& req) {
  Request r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  r.host = std::string(req[http::field::host]);
  r.range = std::string(req[http::field::range]);
  r.if_range = std::string(req[http::field::if_range]);
  r.if_match = std::string(req[http::field::if_match]);
  r.if_none_match = std::string(req[http::field::if_none_match]);
  return r;
}

RequestAnswer answer(const HttpRequest& req, const RequestContext& context) {
  const Request r = request_of(req);
  const HostVerdict host = check_host(req.version(), req.count(http::field::host), r.host, context.hosts);
  if (host != HostVerdict::allowed) return {host_refusal(host, r.host), 0, true};
  const std::string path = r.target.substr(0, r.target.find('?'));
  if (path == "/metrics") return {metrics_plan(r.method, r.method == "GET" || r.method == "HEAD" ? context.metrics() : ""), 0, false};
  if (auto p = static_plan(r, context.pages)) return {std::move(*p), 0, false};
  const proto::Catalog* catalog = nullptr;
  try {
    catalog = &context.catalog();
  } catch (const std::exception& e) {
    return {error_plan(502, std::string("the vod-server at ") + context.server + " is not available: " + e.what()), 0, false};
  }
  return {route(r, Site{*catalog, context.pages, context.default_host, context.server, context.stale()}), catalog->generation, false};
}

void limit_parser(http::request_parser<http::empty_body>& parser, std::size_t header_bytes) {
  parser.header_limit(static_cast<std::uint32_t>(header_bytes));
  parser.body_limit(0);  // GET and HEAD carry no body; anything else is refused
}

}  // namespace vod::proxy
