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

namespace {

bool cors_allows(const RequestContext& context, const std::string& origin) {
  if (!context.cors_origins || origin.empty()) return false;
  for (const auto& o : *context.cors_origins)
    if (o == origin) return true;
  return false;
}

// The headers that let a page of an allowed origin read this response (the Range path's too).
void add_cors(Plan& p, const RequestContext& context, const std::string& origin) {
  if (!context.cors_origins || context.cors_origins->empty()) return;
  p.headers.emplace_back("Vary", "Origin");  // a cache must not hand one origin's answer to another
  if (!cors_allows(context, origin)) return;
  p.headers.emplace_back("Access-Control-Allow-Origin", origin);
  p.headers.emplace_back("Access-Control-Expose-Headers", "Content-Length, Content-Range, Accept-Ranges, ETag");
}

}  // namespace

RequestAnswer answer(const HttpRequest& req, const RequestContext& context) {
  RequestAnswer a = answer_unshared(req, context);
  add_cors(a.plan, context, std::string(req[http::field::origin]));
  return a;
}

RequestAnswer answer_unshared(const HttpRequest& req, const RequestContext& context) {
  const Request r = request_of(req);
  const HostVerdict host = check_host(req.version(), req.count(http::field::host), r.host, context.hosts);
  if (host != HostVerdict::allowed) return {host_refusal(host, r.host), 0, true};
  if (r.method == "OPTIONS" && cors_allows(context, std::string(req[http::field::origin]))) {
    // A CORS preflight from an allowed origin (a player's Range request may need one).
    Plan p;
    p.status = 204;
    p.send_body = false;
    p.headers = {{"Access-Control-Allow-Methods", "GET, HEAD"},
                 {"Access-Control-Allow-Headers", "Range, If-Range, If-None-Match"},
                 {"Access-Control-Max-Age", "600"}};
    return {std::move(p), 0, false};
  }
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
