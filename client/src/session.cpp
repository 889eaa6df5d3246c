// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/session.hpp"

#include <algorithm>

#include "rdma/rdma_fetcher.hpp"
#include "rdma/segment_reader.hpp"
#include "rdma/server_connection.hpp"
#include "udp/udp_fetcher.hpp"
#include "vod/client/reconnect.hpp"
#include "vod/cluster/etcd_url.hpp"
#include "vod/log.hpp"
#include "vod/protocol/live_window.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/rdma/error.hpp"
#include "vod/rdma/startup_trace.hpp"

namespace vod::client {

const char* to_string(ErrorKind k) noexcept {
  switch (k) {
    case ErrorKind::unknown_movie: return "unknown movie";
    case ErrorKind::server_unreachable: return "server unreachable";
    case ErrorKind::no_device: return "no RDMA device";
    case ErrorKind::rejected: return "rejected";
    case ErrorKind::unauthorized: return "unauthorized";
    case ErrorKind::protocol_error: return "protocol error";
    case ErrorKind::connection_lost: return "connection lost";
    case ErrorKind::out_of_range: return "out of range";
    case ErrorKind::movie_changed: return "movie changed";
    case ErrorKind::usage: return "usage";
  }
  return "error";
}

ErrorKind kind_of(proto::RejectCode code) noexcept {
  switch (code) {
    case proto::RejectCode::unknown_movie: return ErrorKind::unknown_movie;
    case proto::RejectCode::unauthorized: return ErrorKind::unauthorized;  // not retried: a new attempt carries the same token
    default: return ErrorKind::rejected;
  }
}

std::string list_names(const proto::Catalog& catalog, std::size_t max_names) {
  if (catalog.entries.empty()) return "(the catalog is empty)";
  std::string out;
  for (std::size_t i = 0; i < catalog.entries.size() && i < max_names; ++i) out += (i ? ", " : "") + catalog.entries[i].name;
  if (catalog.entries.size() > max_names) out += ", ... (" + std::to_string(catalog.entries.size()) + " in all)";
  return out;
}

Session::Session(Uri uri, SessionOptions options)
    : uri_(std::move(uri)),
      options_(std::move(options)),
      hub_(options_.hub ? options_.hub : std::make_shared<rdma::CompletionHub>()),
      engine_(options_.engine) {
  engine_.set_interrupter(&interrupter_);
  window_ = uri_.movie && proto::window_channel(*uri_.movie).has_value();
  // A window reads nothing ahead until its reader says where it is and how far the window goes
  // (engine().set_readahead_limit): offset 0 is long overwritten.
  if (window_) engine_.set_readahead(false);
  // In a fleet there is another member to go to: the server is watched, so that a dead, hung or
  // draining one is left within about a second (docs/client.md, "Failover").
  if (uri_.cluster && uri_.cluster->failover_ms > 0)
    engine_.watch_server(ReadEngine::ServerWatch::after(std::chrono::milliseconds(uri_.cluster->failover_ms)));
  connect();
}

// The fetcher goes before its connection: it holds the endpoint by reference, and its reader's
// memory is where the QP's receives and Reads land until the QP stops.
Session::~Session() { drop_connection(); }

std::string Session::server() const {
  if (options_.transport != Transport::udp) return server_name(uri_);
  return cluster::format_host_port(uri_.host, options_.udp.port) + " (UDP)";
}

rdma::ClientEndpoint& Session::open_endpoint(const proto::ConnectRequest& request) {
  ServerConnectOptions o;
  o.request = request;
  o.what = "the connection";
  o.read_depth = options_.engine.read_depth;
  // The engine's Reads, and for a movie of the segment cache each part's data and check Reads and
  // the segment requests, with receives for their answers (rdma/segment_reader.hpp).
  o.send_queue_depth = options_.engine.read_depth + RdmaFetcher::kSpareReads + SegmentReader::kMaxCredits;
  o.recv_queue_depth = SegmentReader::kMaxCredits;
  o.timeout = options_.connect_timeout;
  o.ack_timeout = options_.ack_timeout;
  o.hub = hub_.get();
  // The ring is registered on the new connection's PD while the connect request is on the wire:
  // the connection comes up with nothing left to do before the movie's first Read.
  ibv_mr* ring_mr = nullptr;  // owned by the endpoint's memory
  o.while_connecting = [this, &ring_mr](rdma::ClientEndpoint& ep) { ring_mr = engine_.register_ring(ep); };
  ServerConnection c;
  try {
    c = connect_to(uri_, std::move(o));
  } catch (const ClientError& e) {
    if (e.kind() != ErrorKind::unknown_movie) throw;
    if (uri_.cluster)  // the fleet tries the next member
      throw ClientError(ErrorKind::unknown_movie, "no movie '" + uri_.movie.value_or("") + "' on " + server());
    std::string names;
    try {                      // best effort: ask for the catalog to say what exists
      Uri catalog_uri = uri_;  // the same server and token
      catalog_uri.movie.reset();
      catalog_uri.live = false;
      Session catalog_only(catalog_uri, options_);
      names = list_names(catalog_only.catalog());
    } catch (const std::exception&) {
      names = "(could not read the catalog)";
    }
    throw ClientError(ErrorKind::unknown_movie, "no movie '" + uri_.movie.value_or("") + "' on " + server() + "; it has: " + names);
  }
  drop_connection();  // the old connection (and its MR) go before the new one is used
  endpoint_ = std::move(c.endpoint);
  read_depth_ = c.read_depth;
  accept_ = c.accept;
  engine_.attach(*endpoint_, read_depth_, c.max_read, ring_mr);
  return *endpoint_;
}

std::string Session::transport_summary() const { return engine_.transport_summary(); }

Stats Session::stats() const {
  Stats s = engine_.stats();
  s.reconnects = reconnects_;
  return s;
}

std::chrono::steady_clock::time_point Session::open_rdma(const std::string& name) {
  proto::ConnectRequest request;
  if (!name.empty()) {
    request.kind = proto::RequestKind::movie;
    request.selector_type = proto::SelectorType::name_hash;
    request.selector = proto::name_hash(name);
  }
  open_endpoint(request);
  const auto connected = std::chrono::steady_clock::now();
  engine_.set_region(Region::catalog, accept_.catalog);
  rdma::startup_trace::mark("accept decoded, engine attached");
  return connected;
}

std::chrono::steady_clock::time_point Session::open_udp() {
  drop_connection();
  auto fetcher = std::make_unique<UdpFetcher>(uri_.host, options_.udp.port, engine_.ring(), engine_.ring_bytes(), options_.udp);
  const auto connected = std::chrono::steady_clock::now();
  read_depth_ = fetcher->depth();
  engine_.attach(std::move(fetcher));
  accept_ = {};
  // The catalog's length is in its header: read that first.
  engine_.set_region(Region::catalog, {0, sizeof(proto::WireCatalogHeader), 0});
  std::vector<std::uint8_t> head(sizeof(proto::WireCatalogHeader));
  engine_.read(Region::catalog, 0, head);
  auto info = proto::decode_catalog_header(head);
  if (!info) throw ClientError(ErrorKind::protocol_error, "the catalog of " + server() + " does not decode: " + info.error().message);
  engine_.set_region(Region::catalog, {0, info->region_length, 0});
  return connected;
}

void Session::connect() {
  if (uri_.cluster) connect_in_fleet();
  else connect_to_server();
}

void Session::connect_to_server() {
  const std::string name = movie_ ? movie_->name : uri_.movie.value_or("");
  // Until this connection's catalog says where the movie and its index are, nothing may be read
  // from them: after a server restart the old rkeys are invalid.
  engine_.set_region(Region::movie, {});
  engine_.set_region(Region::index, {});
  cancel_background(catalog_read_);  // the new connection's describe starts them again
  cancel_background(index_read_);
  accepted_name_.clear();
  const auto started = std::chrono::steady_clock::now();
  const auto connected = options_.transport == Transport::udp ? open_udp() : open_rdma(name);
  if (!name.empty() && options_.transport == Transport::rdma) describe_from_accept(name);
  else describe_from_catalog(name);
  startup_.connect = std::chrono::duration_cast<std::chrono::microseconds>(connected - started);
  startup_.describe = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - connected);
}

void Session::reconnect(const std::string& why) {
  // The server ends a connection when its token expires: say so, and do not knock again with it.
  refuse_expired_token(uri_);
  if (!options_.reconnect.in_place) {
    drop_connection();
    throw ClientError(ErrorKind::connection_lost, "lost the connection to " + server() + ": " + why);
  }
  // The same failure again with nothing read since the last reconnect: the server answered, and will
  // answer the same (a fill from its origin failed twice, each after the server's own retries).
  if (why == last_loss_ && reads_done_ == reads_at_last_loss_ && !uri_.cluster) {
    drop_connection();
    throw ClientError(ErrorKind::connection_lost, server() + ": " + why + " (again after a reconnect: giving up)");
  }
  last_loss_ = why;
  reads_at_last_loss_ = reads_done_;
  log::warn("client",
            "connection to " + server() + " lost (" + why + ")" + (uri_.cluster ? "; reconnecting in the fleet" : "; reconnecting"));
  if (uri_.cluster) lost_member_ = member_id();
  drop_connection();
  const unsigned failed = reconnect_on_schedule(
      options_.reconnect, interrupter_, server(), why, [this] { connect(); }, [this] { drop_connection(); });
  ++reconnects_;
  lost_member_.clear();
  log::info("client", "reconnected to " + server() + " after " + std::to_string(failed + 1) + " attempt(s)");
}

void Session::drop_connection() noexcept {
  engine_.detach();
  endpoint_.reset();
  engine_.release_pins();  // no Read can land in a reader's buffer any more
}

void Session::switch_movie(const std::string& name) {
  if (uri_.cluster) return switch_by_connecting(name);  // placed anew: perhaps on another member
  settle_catalog();
  const proto::CatalogEntry* entry = catalog_.find(name);
  if (!entry)
    throw ClientError(ErrorKind::unknown_movie,
                      "no movie '" + name + "' in the catalog of " + server() + "; it has: " + list_names(catalog_));
  if ((entry->flags & proto::kEntryWindowed) && options_.transport == Transport::rdma) return switch_by_connecting(name);
  window_ = proto::window_channel(name).has_value();
  movie_ = *entry;
  delivered_ = false;
  served_by_ = server();
  uri_.movie = name;
  engine_.select_movie(proto::name_hash(entry->name), catalog_.generation);
  select_movie_region(entry->movie, entry->segments, static_cast<std::uint32_t>(entry - catalog_.entries.data()), entry->size);
  size_readahead();
  start_index_read(movie_->index);
}

void Session::switch_by_connecting(const std::string& name) {
  // The server binds memory windows per connection and its catalog lists no rkeys: the other movie
  // comes with a connection of its own (same token), made before the current one is let go. A
  // refusal (a token that does not cover the movie, say) leaves the current movie as it was.
  const auto saved_movie = movie_;
  const auto saved_name = uri_.movie;
  const auto saved_index = index_;
  const bool saved_index_ready = index_ready();
  const auto movie_region = engine_.region(Region::movie), index_region = engine_.region(Region::index);
  const rdma::ClientEndpoint* before = endpoint_.get();
  const std::uint64_t saved_resume = resume_at_;
  const bool saved_delivered = std::exchange(delivered_, false);
  const bool saved_window = std::exchange(window_, proto::window_channel(name).has_value());
  movie_.reset();
  uri_.movie = name;
  resume_at_ = 0;  // the new movie is prefetched from its start
  try {
    connect();
  } catch (const ClientError&) {
    if (endpoint_.get() != before || !endpoint_) throw;  // the new connection was made and then failed: nothing to go back to
    movie_ = saved_movie;
    delivered_ = saved_delivered;
    window_ = saved_window;
    uri_.movie = saved_name;
    resume_at_ = saved_resume;
    engine_.set_region(Region::movie, movie_region);
    engine_.set_region(Region::index, index_region);
    if (saved_index_ready) {
      index_ = saved_index;
      index_read_.state = BackgroundRead::State::ready;
    } else if (movie_) {
      start_index_read(movie_->index);  // it was still coming when the switch began
    }
    throw;
  } catch (const ConnectionLost& e) {
    reconnect(e.what());
  }
}

const std::shared_ptr<BufferPool>& Session::buffers(const BufferPoolOptions& options) {
  if (!pool_) {
    pool_ = BufferPool::make(options);
    engine_.use_pool(pool_);
  }
  return pool_;
}

void Session::use_buffers(std::shared_ptr<BufferPool> pool) {
  pool_ = std::move(pool);
  engine_.use_pool(pool_);
}

std::uint64_t Session::pread_async(std::uint64_t offset, std::span<std::uint8_t> dest, ReadEngine::Callback done) {
  if (!has_movie()) throw ClientError(ErrorKind::usage, "this session has no movie (it was opened for the catalog only)");
  resume_at_ = offset;  // where a reconnect prefetches
  return engine_.submit(Region::movie, offset, dest, [this, done = std::move(done)](std::size_t n) {
    if (n > 0) {
      delivered_ = true;  // from now on a reconnect continues only onto this version
      ++reads_done_;
    }
    done(n);
  });
}

void Session::progress(std::chrono::milliseconds wait) {
  try {
    engine_.progress(wait);
  } catch (const ConnectionLost& e) {
    // A catalog that landed before the connection went still says which version the bytes
    // delivered so far are: a reconnect can then resume on that version.
    confirm_landed_catalog();
    reconnect(e.what());
  }
  confirm_landed_catalog();
}

void Session::confirm_landed_catalog() {
  if (catalog_read_.state == BackgroundRead::State::reading && catalog_read_.landed) confirm_catalog();
}

std::size_t Session::pread(std::uint64_t offset, std::span<std::uint8_t> dest) {
  bool done = false;
  std::size_t got = 0;
  const std::uint64_t id = pread_async(offset, dest, [&](std::size_t n) {
    done = true;
    got = n;
  });
  try {
    while (!done) progress(std::chrono::milliseconds(1000));
  } catch (...) {
    cancel(id);
    throw;
  }
  return got;
}

}  // namespace vod::client
