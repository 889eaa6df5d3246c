#include "http_connection.hpp"

#include "vod/log.hpp"

namespace vod::proxy {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

HttpConnection::HttpConnection(asio::ip::tcp::socket socket, const Services& services, const ConnectionLimits& limits, std::string default_host)
    : stream_(std::move(socket)),
      pool_(services.pool),
      metrics_(services.metrics),
      pages_(services.pages),
      thumbnails_(services.thumbnails),
      limits_(limits),
      default_host_(std::move(default_host)) {
  metrics_.connection_opened();
  beast::error_code ec;
  const auto ep = stream_.socket().remote_endpoint(ec);
  peer_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
  for (auto& b : blocks_) b.data.resize(limits_.chunk_bytes);
}

HttpConnection::~HttpConnection() {
  // Reads still outstanding would write into blocks_, which go with this object.
  for (auto& b : blocks_)
    if (b.busy && !b.ready) pool_.cancel(b.read_id);
  if (live_) live_->close();
  metrics_.connection_closed();
}

void HttpConnection::start() { read_request(); }

void HttpConnection::read_request() {
  parser_.emplace();
  parser_->header_limit(static_cast<std::uint32_t>(limits_.header_bytes));
  parser_->body_limit(0);  // GET and HEAD carry no body; anything else is refused
  stream_.expires_after(limits_.idle);
  http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
}

void HttpConnection::on_request(beast::error_code ec) {
  started_ = std::chrono::steady_clock::now();
  if (ec == http::error::end_of_stream || ec == asio::error::connection_reset || ec == beast::error::timeout ||
      ec == asio::error::operation_aborted) {
    stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    return;
  }
  if (ec) {
    // Malformed requests get a 4xx and the connection closes: the stream cannot be trusted.
    keep_alive_ = false;
    request_line_ = "(unparsable request)";
    range_.clear();
    unsigned status = 400;
    std::string why = ec.message();
    if (ec == http::error::header_limit) status = 431, why = "the request headers exceed " + std::to_string(limits_.header_bytes) + " bytes";
    else if (ec == http::error::body_limit || ec == http::error::unexpected_body) status = 413, why = "requests to this proxy carry no body";
    Plan p = error_plan(status, why);
    respond(std::move(p), "GET");
    return;
  }
  const auto& req = parser_->get();
  keep_alive_ = req.keep_alive();
  http_version_ = req.version();
  Request r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  r.host = std::string(req[http::field::host]);
  r.range = std::string(req[http::field::range]);
  r.if_range = std::string(req[http::field::if_range]);
  r.if_match = std::string(req[http::field::if_match]);
  r.if_none_match = std::string(req[http::field::if_none_match]);
  request_line_ = r.method + " " + r.target;
  range_ = r.range;
  Plan plan;
  const std::string path = r.target.substr(0, r.target.find('?'));
  if (path == "/metrics") return respond(metrics_plan(r.method, r.method == "GET" || r.method == "HEAD" ? metrics_.render(pool_.figures(), thumbnails_.figures()) : ""), r.method);
  if (auto p = static_plan(r, pages_)) return respond(std::move(*p), r.method);
  std::uint32_t generation = 0;
  try {
    const proto::Catalog& catalog = pool_.catalog();
    generation = catalog.generation;
    plan = route(r, Site{catalog, pages_, default_host_, pool_.server()});
  } catch (const std::exception& e) {
    plan = error_plan(502, std::string("the vod-server at ") + pool_.server() + " is not available: " + e.what());
  }
  if (plan.thumbnail) return respond_with_picture(std::move(plan), r.method, generation);
  respond(std::move(plan), r.method);
}

void HttpConnection::respond_with_picture(Plan plan, const std::string& method, std::uint32_t generation) {
  // The picture is made (or found) off this thread; the connection waits without reading.
  const ThumbnailWant want = *plan.thumbnail;
  thumbnails_.get(want, generation, [self = shared_from_this(), plan = std::move(plan), method](std::shared_ptr<const Picture> picture) mutable {
    plan.thumbnail.reset();
    plan.text = picture->jpeg;
    if (picture->placeholder) {
      // Say why, and let the browser ask again later: the next generation may decode.
      plan.headers = {{"Content-Type", "image/jpeg"}, {"Cache-Control", "no-cache"}, {"X-Thumbnail", "placeholder: " + picture->note}};
    }
    self->respond(std::move(plan), method);
  });
}

void HttpConnection::respond(Plan plan, const std::string& method) {
  plan_ = std::move(plan);
  if (method == "HEAD") plan_.send_body = false;
  if (!plan_.live.empty() && plan_.send_body) {
    // Open the channel before the status line goes out, so a failure is an HTTP error that says why.
    client::Uri uri = pool_.server_uri();
    uri.movie = plan_.live;
    uri.live = true;
    try {
      live_ = pool_.udp() ? std::make_shared<LiveRelay>(pool_.io(), uri, pool_.multicast_options())
                          : std::make_shared<LiveRelay>(pool_.io(), uri, pool_.live_options());
    } catch (const std::exception& e) {
      return respond(error_plan(503, std::string("cannot open the live channel '") + plan_.live + "': " + e.what()), method);
    }
  }
  header_ = std::make_shared<http::response<http::empty_body>>();
  header_->version(11);
  header_->result(plan_.status);
  header_->set(http::field::server, "vod-proxy");
  for (const auto& [name, value] : plan_.headers) header_->set(name, value);
  if (!plan_.live.empty()) {
    // An endless body: chunked for HTTP/1.1, delimited by closing the connection for HTTP/1.0.
    keep_alive_ = false;
    chunked_ = http_version_ >= 11;
    if (chunked_) header_->chunked(true);
  } else {
    header_->content_length(plan_.status == 304 ? 0 : plan_.body_length());
  }
  header_->keep_alive(keep_alive_);
  stream_.expires_after(limits_.stalled);
  if (!plan_.live.empty()) {
    // The header alone: writing the whole (empty-bodied) message would end the chunked body.
    live_header_ = std::make_shared<http::response_serializer<http::empty_body>>(*header_);
    http::async_write_header(stream_, *live_header_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->log_access(self->plan_.status, 0);
      self->plan_.send_body ? self->start_live() : self->finish();
    });
    return;
  }
  // The header goes first; the body follows as raw bytes on the same stream.
  http::async_write(stream_, *header_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec) return self->log_access(self->plan_.status, 0);
    if (!self->plan_.send_body || self->plan_.body_length() == 0) return self->finish();
    if (self->plan_.movie.empty()) {
      asio::async_write(self->stream_, asio::buffer(self->plan_.text), [self](beast::error_code wec, std::size_t) {
        if (wec) return self->log_access(self->plan_.status, 0);
        self->finish();
      });
      return;
    }
    self->next_read_ = self->next_write_ = self->plan_.offset;
    self->end_ = self->plan_.offset + self->plan_.length;
    self->fill_blocks();
  });
}

void HttpConnection::fill_blocks() {
  for (auto& b : blocks_) {
    if (b.busy || next_read_ >= end_) continue;
    b.busy = true;
    b.ready = false;
    b.offset = next_read_;
    b.length = static_cast<std::size_t>(std::min<std::uint64_t>(b.data.size(), end_ - next_read_));
    next_read_ += b.length;
    Block* block = &b;
    b.read_id = pool_.read(plan_.movie, b.offset, std::span<std::uint8_t>(b.data.data(), b.length),
                           // The read keeps the connection alive: between writes it is the only thing that does.
                           [self = shared_from_this(), block](std::size_t n, const std::string& error) {
                             if (!error.empty() || n != block->length) {
                               self->abort_stream(error.empty() ? "short read from the server" : error);
                               return;
                             }
                             block->ready = true;
                             self->write_ready_block();
                           });
  }
}

void HttpConnection::write_ready_block() {
  if (writing_) return;
  for (auto& b : blocks_) {
    if (!b.busy || !b.ready || b.offset != next_write_) continue;
    writing_ = true;
    stream_.expires_after(limits_.stalled);
    asio::async_write(stream_, asio::buffer(b.data.data(), b.length), [self = shared_from_this(), block = &b](beast::error_code ec, std::size_t) {
      self->writing_ = false;
      if (ec) {  // the player went away or stalled past the limit: stop, and issue no more Reads
        self->log_access(self->plan_.status, self->next_write_ - self->plan_.offset);
        return;
      }
      self->next_write_ += block->length;
      block->busy = false;
      if (self->next_write_ >= self->end_) return self->finish();
      self->fill_blocks();
      self->write_ready_block();
    });
    return;
  }
}

void HttpConnection::start_live() {
  next_write_ = 0;
  relay_live();
}

void HttpConnection::relay_live() {
  Block& b = blocks_[0];
  live_->next(std::span<std::uint8_t>(b.data), [self = shared_from_this()](std::size_t n, const std::string& error) {
    if (!error.empty()) return self->abort_stream(error);
    auto written = [self, n](beast::error_code ec, std::size_t) {
      if (ec) {  // the player went away: the relay (and its RDMA connection) goes with this object
        self->log_access(self->plan_.status, self->next_write_);
        return;
      }
      self->next_write_ += n;
      self->relay_live();
    };
    self->stream_.expires_after(self->limits_.stalled);
    const auto data = asio::buffer(self->blocks_[0].data.data(), n);
    if (self->chunked_) asio::async_write(self->stream_, http::make_chunk(data), written);
    else asio::async_write(self->stream_, data, written);
  });
}

void HttpConnection::abort_stream(const std::string& why) {
  // Never send wrong bytes: end the response short by closing; the client sees an incomplete body.
  log::warn("proxy", peer_ + " " + request_line_ + ": ending the response at byte " + std::to_string(next_write_) + ": " + why);
  log_access(plan_.status, next_write_ - plan_.offset);
  beast::error_code ec;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  stream_.close();
}

void HttpConnection::finish() {
  log_access(plan_.status, plan_.send_body ? plan_.body_length() : 0);
  if (!keep_alive_) {
    beast::error_code ec;
    stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    return;
  }
  read_request();
}

void HttpConnection::log_access(unsigned status, std::uint64_t bytes) {
  metrics_.response(status, bytes);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count();
  log::info("access", peer_ + " \"" + request_line_ + "\" " + std::to_string(status) + " " + std::to_string(bytes) + " B" +
                          (range_.empty() ? "" : " range=" + range_) + " " + std::to_string(ms) + " ms");
}

}  // namespace vod::proxy
