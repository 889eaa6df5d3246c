// SPDX-License-Identifier: LGPL-2.1-or-later
#include "http_connection.hpp"

#include "vod/log.hpp"

namespace vod::proxy {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

HttpConnection::HttpConnection(tcp::socket socket, const Services& services, const ConnectionLimits& limits, std::string default_host,
                               ConnectionSlots::Slot slot)
    : stream_(std::move(socket)),
      pool_(services.pool),
      metrics_(services.metrics),
      pages_(services.pages),
      thumbnails_(services.thumbnails),
      hls_(services.hls),
      cors_origins_(services.cors_origins),
      hosts_(services.hosts),
      live_hubs_(services.live),
      live_hls_(services.live_hls),
      limits_(limits),
      default_host_(std::move(default_host)),
      slot_(std::move(slot)),
      accepted_(std::chrono::steady_clock::now()),
      deadline_(stream_.get_executor()),
      blocks_(limits.chunk_bytes) {
  metrics_.connection_opened();
  beast::error_code ec;
  const auto ep = stream_.socket().remote_endpoint(ec);
  peer_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
}

HttpConnection::~HttpConnection() {
  // Reads still outstanding would write into blocks_, which go with this object.
  blocks_.each_reading([this](const RangeBlocks::Block& b) { pool_.cancel(b.read_id); });
  live_.reset();
  metrics_.connection_closed();
}

void HttpConnection::start() { wait_for_request(); }

// ---------------------------------------------------------------- reading a request

void HttpConnection::wait_for_request() {
  parser_.reset();
  if (buffer_.size() > 0) return read_header();  // the next request is here already (pipelined)
  buffer_.shrink_to_fit();                       // an idle connection holds no buffer
  arm_deadline(first_request_ ? accepted_ + limits_.header_timeout : std::chrono::steady_clock::now() + limits_.idle_timeout);
  stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this()](beast::error_code ec) { self->on_readable(ec); });
}

void HttpConnection::on_readable(beast::error_code ec) {
  if (timed_out_) {
    // Nothing came: close without an answer (a client may have opened the connection ahead of use).
    metrics_.idle_timeout();
    log::debug("proxy", peer_ + ": closed: no request within " +
                            std::to_string((first_request_ ? limits_.header_timeout : limits_.idle_timeout).count()) + " s (" +
                            (first_request_ ? "--header-timeout" : "--idle-timeout") + ")");
    return close();
  }
  disarm_deadline();
  if (ec) return close();
  read_header();
}

void HttpConnection::read_header() {
  parser_.emplace();
  limit_parser(*parser_, limits_.header_bytes);
  arm_deadline(first_request_ ? accepted_ + limits_.header_timeout : std::chrono::steady_clock::now() + limits_.header_timeout);
  stream_.expires_never();  // the deadline above is the limit: it answers 408 where the stream's own timeout would only close
  http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
}

void HttpConnection::arm_deadline(std::chrono::steady_clock::time_point when) {
  timed_out_ = false;
  const std::uint64_t generation = ++deadline_generation_;
  deadline_.expires_at(when);
  deadline_.async_wait([weak = weak_from_this(), generation](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self || self->deadline_generation_ != generation) return;
    self->timed_out_ = true;
    beast::error_code ignored;
    self->stream_.socket().cancel(ignored);  // the wait or read completes with operation_aborted
  });
}

void HttpConnection::disarm_deadline() {
  ++deadline_generation_;  // a deadline that fired but whose handler has not run yet does nothing
  deadline_.cancel();
}

void HttpConnection::on_request(beast::error_code ec) {
  const bool timed_out = timed_out_;
  disarm_deadline();
  started_ = std::chrono::steady_clock::now();
  if (timed_out) {
    metrics_.header_timeout();
    keep_alive_ = false;
    request_line_ = "(request header incomplete)";
    range_.clear();
    return respond(error_plan(408, "the request header did not arrive whole within " + std::to_string(limits_.header_timeout.count()) +
                                       " s of " + (first_request_ ? "the connection opening" : "its first byte") +
                                       " (--header-timeout); send the whole header at once"),
                   "GET");
  }
  if (ec == http::error::end_of_stream || ec == asio::error::connection_reset || ec == beast::error::timeout ||
      ec == asio::error::operation_aborted) {
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    return;
  }
  if (ec) {
    // Malformed requests get a 4xx and the connection closes: the stream cannot be trusted.
    keep_alive_ = false;
    request_line_ = "(unparsable request)";
    range_.clear();
    unsigned status = 400;
    std::string why = ec.message();
    if (ec == http::error::header_limit)
      status = 431, why = "the request headers exceed " + std::to_string(limits_.header_bytes) + " bytes";
    else if (ec == http::error::body_limit || ec == http::error::unexpected_body)
      status = 413, why = "requests to this proxy carry no body";
    Plan p = error_plan(status, why);
    respond(std::move(p), "GET");
    return;
  }
  const auto& req = parser_->get();
  keep_alive_ = req.keep_alive();
  http_version_ = req.version();
  request_line_ = std::string(req.method_string()) + " " + std::string(req.target());
  range_ = std::string(req[http::field::range]);
  const std::string method(req.method_string());
  const RequestContext context{hosts_,
                               pages_,
                               default_host_,
                               pool_.server(),
                               [this]() -> const proto::Catalog& { return pool_.catalog(); },
                               [this] { return metrics_.render(pool_.figures(), thumbnails_.figures()); },
                               [this] { return pool_.catalog_staleness(); },
                               &cors_origins_};
  RequestAnswer a;
  try {
    a = answer(req, context);
  } catch (const std::exception& e) {  // a bug, not the client's doing: this request fails, the proxy goes on
    log::error("proxy", peer_ + " " + request_line_ + ": " + e.what());
    a = {error_plan(500, "the proxy failed on this request; its log says why"), 0, true};
  }
  if (a.close) keep_alive_ = false;
  // A body a service still has to make waits for it; any other goes out now.
  if (a.plan.as<ThumbnailWant>()) return respond_with_picture(std::move(a.plan), method, a.generation);
  if (a.plan.as<HlsWant>()) return respond_with_playlist(std::move(a.plan), method, a.generation);
  if (a.plan.as<LiveHlsWant>()) return respond_with_live_hls(std::move(a.plan), method);
  respond(std::move(a.plan), method);
}

// ---------------------------------------------------------------- responding

void HttpConnection::respond_with_picture(Plan plan, const std::string& method, std::uint32_t generation) {
  // The picture is made (or found) off this thread; the connection waits without reading.
  const ThumbnailWant want = *plan.as<ThumbnailWant>();
  thumbnails_.get(
      want, generation, [self = shared_from_this(), plan = std::move(plan), method](std::shared_ptr<const Picture> picture) mutable {
        plan.body = picture->jpeg;
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
  const LiveStream* live = plan_.as<LiveStream>();
  if (live && plan_.send_body && !live_) {
    // Join the channel before the status line goes out, so a failure is an HTTP error that says
    // why. Its session opens off the event loop: the connection waits, nothing else does.
    live_hubs_.subscribe(
        live->channel, peer_, [self = shared_from_this(), method](std::unique_ptr<LiveViewer> viewer, const std::string& error) {
          if (!viewer)
            return self->respond(
                error_plan(503, std::string("cannot open the live channel '") + self->plan_.as<LiveStream>()->channel + "': " + error),
                method);
          self->live_ = std::move(viewer);
          self->respond(std::move(self->plan_), method);
        });
    return;
  }
  header_ = std::make_shared<http::response<http::empty_body>>();
  header_->version(11);
  header_->result(plan_.status);
  header_->set(http::field::server, "vod-proxy");
  for (const auto& [name, value] : plan_.headers) header_->set(name, value);
  if (live) {
    // An endless body: chunked for HTTP/1.1, delimited by closing the connection for HTTP/1.0.
    keep_alive_ = false;
    chunked_ = http_version_ >= 11;
    if (chunked_) header_->chunked(true);
  } else {
    header_->content_length(plan_.status == 304 ? 0 : plan_.body_length());
  }
  header_->keep_alive(keep_alive_);
  stream_.expires_after(limits_.stalled);
  if (live) {
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
    const MovieRange* range = self->plan_.as<MovieRange>();
    if (!range) {
      asio::async_write(self->stream_, asio::buffer(self->plan_.text()), [self](beast::error_code wec, std::size_t) {
        if (wec) return self->log_access(self->plan_.status, 0);
        self->finish();
      });
      return;
    }
    self->blocks_.start(range->offset, range->length, [self] { return self->pool_.take_block(); });
    self->fill_blocks();
  });
}

void HttpConnection::fill_blocks() {
  const MovieRange& range = *plan_.as<MovieRange>();
  while (RangeBlocks::Block* b = blocks_.next_to_read()) {
    b->read_id = pool_.read(range.name, range.content, b->offset, std::span<std::uint8_t>(b->data(), b->length),
                            // The read keeps the connection alive: between writes it is the only thing that does.
                            [self = shared_from_this(), b](std::size_t n, const std::string& error) {
                              if (!error.empty() || n != b->length) {
                                self->abort_stream(error.empty() ? "short read from the server" : error);
                                return;
                              }
                              b->state = RangeBlocks::Block::State::ready;
                              self->write_ready_block();
                            });
  }
}

void HttpConnection::write_ready_block() {
  if (writing_) return;
  RangeBlocks::Block* b = blocks_.next_to_write();
  if (!b) return;
  writing_ = true;
  stream_.expires_after(limits_.stalled);
  asio::async_write(stream_, asio::buffer(b->data(), b->length), [self = shared_from_this(), b](beast::error_code ec, std::size_t) {
    self->writing_ = false;
    if (ec) return self->log_access(self->plan_.status, self->blocks_.sent());  // the player went away or stalled: no more Reads
    if (self->blocks_.written(*b)) return self->finish();
    self->fill_blocks();
    self->write_ready_block();
  });
}

// ---------------------------------------------------------------- a live channel

void HttpConnection::start_live() {
  live_sent_ = 0;
  if (limits_.live_send_buffer) {
    beast::error_code ignored;  // a smaller buffer is an optimisation; the kernel's default still works
    stream_.socket().set_option(asio::socket_base::send_buffer_size(static_cast<int>(limits_.live_send_buffer)), ignored);
  }
  stream_.expires_never();  // the watch below waits as long as the response lasts; each write sets its own stall timeout
  watch_live_client();
  relay_live();
}

void HttpConnection::relay_live() {
  if (live_ended_) return;
  live_->next([self = shared_from_this()](const BacklogStep& step, const std::string& error) {
    if (self->live_ended_) return;
    if (!error.empty()) return self->end_live(error);
    auto written = [self, chunk = step.chunk](beast::error_code ec, std::size_t) {
      self->writing_ = false;
      if (ec) return self->end_live("");  // the player went away, or stalled past the limit
      self->live_sent_ += chunk->bytes.size();
      self->relay_live();
    };
    self->writing_ = true;
    self->stream_.expires_after(self->limits_.stalled);  // the write's alone: the watch's read is pending
    const auto data = asio::buffer(step.chunk->bytes);
    if (self->chunked_) asio::async_write(self->stream_, http::make_chunk(data), std::move(written));
    else asio::async_write(self->stream_, data, std::move(written));
  });
}

void HttpConnection::watch_live_client() {
  // A player sends nothing during a live response; the read ends when it closes the connection,
  // which may be while the channel has nothing new to write.
  stream_.async_read_some(asio::buffer(live_sink_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (self->live_ended_) return;
    if (!ec) return self->watch_live_client();
    self->end_live("");
  });
}

void HttpConnection::end_live(const std::string& why) {
  if (live_ended_) return;
  live_ended_ = true;
  if (!why.empty())
    log::warn("proxy", peer_ + " " + request_line_ + ": ending the live response after " + std::to_string(live_sent_) + " bytes: " + why);
  log_access(plan_.status, live_sent_);
  live_.reset();  // leaves the channel's hub
  close();
}

// ---------------------------------------------------------------- endings

void HttpConnection::abort_stream(const std::string& why) {
  // Never send wrong bytes: end the response short by closing; the client sees an incomplete body.
  // Once: both blocks' Reads fail when a session fails, and the response was logged and counted.
  if (!stream_.socket().is_open()) return;
  log::warn("proxy", peer_ + " " + request_line_ + ": ending the response at byte " + std::to_string(blocks_.position()) + ": " + why);
  log_access(plan_.status, blocks_.sent());  // a movie's range: the only body whose Reads can fail
  close();
}

void HttpConnection::finish() {
  log_access(plan_.status, plan_.send_body ? plan_.body_length() : 0);
  blocks_.release();
  if (!keep_alive_) {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    return;
  }
  first_request_ = false;
  wait_for_request();
}

void HttpConnection::close() noexcept {
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.close();
}

void HttpConnection::log_access(unsigned status, std::uint64_t bytes) {
  metrics_.response(status, bytes);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_).count();
  log::info("access", peer_ + " \"" + request_line_ + "\" " + std::to_string(status) + " " + std::to_string(bytes) + " B" +
                          (range_.empty() ? "" : " range=" + range_) + " " + std::to_string(ms) + " ms");
}

}  // namespace vod::proxy
