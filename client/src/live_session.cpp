// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/live_session.hpp"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "live_session_buffer.hpp"
#include "vod/client/reconnect.hpp"
#include "vod/log.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/rdma/error.hpp"
#include "vod/rdma/post.hpp"

namespace vod::client {

namespace {

using Clock = std::chrono::steady_clock;
using live_buffer::kHeaderSlot;
using live_buffer::kRecvSlot;
using live_buffer::kSendSlot;
using live_buffer::kSendSlots;

std::uint64_t realtime_us() noexcept {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000 + static_cast<std::uint64_t>(ts.tv_nsec) / 1000;
}

}  // namespace

std::string LiveStats::summary() const {
  return std::to_string(bytes_delivered) + " bytes, " + std::to_string(notifications) + " notifications (" + std::to_string(coalesced) +
         " coalesced), " + std::to_string(cursor.skips) + " skips (" + std::to_string(cursor.skipped_bytes) + " bytes), " +
         std::to_string(cursor.overwritten) + " overwritten reads, " + std::to_string(torn_headers) + " torn headers, " +
         std::to_string(reconnects) + " reconnects, latency p50 " + std::to_string(latency_us.percentile(0.5)) + " us p99 " +
         std::to_string(latency_us.percentile(0.99)) + " us";
}

LiveSession::LiveSession(Uri uri, LiveOptions options)
    : uri_(std::move(uri)), options_(std::move(options)), hub_(options_.hub ? options_.hub : std::make_shared<rdma::CompletionHub>()) {
  if (!uri_.movie || !uri_.live) throw ClientError(ErrorKind::usage, "a live session needs a live channel URI: rdma://host[:port]/live/NAME");
  options_.credits = std::clamp<std::uint32_t>(options_.credits, 1, 4096);
  options_.staging_bytes = std::max<std::size_t>(options_.staging_bytes, 64 * 1024);
  memory_.resize(options_.staging_bytes + kHeaderSlot + options_.credits * kRecvSlot + kSendSlots * kSendSlot);
  try {
    connect();
  } catch (...) {
    drop_connection();  // the hub may be shared: it must not keep a handler into this object
    throw;
  }
}

LiveSession::~LiveSession() { drop_connection(); }

std::vector<int> LiveSession::wait_fds() const {
  std::vector<int> fds = hub_->fds();
  if (ep_) fds.push_back(ep_->events.fd());
  return fds;
}

std::string LiveSession::server() const {
  const bool v6 = uri_.host.find(':') != std::string::npos;
  return (v6 ? "[" + uri_.host + "]" : uri_.host) + ":" + std::to_string(uri_.port);
}

void LiveSession::drop_connection() noexcept {
  if (owner_) hub_->remove_owner(owner_);  // completions still queued for the old QP are dropped
  owner_ = 0;
  mr_ = nullptr;
  ep_.reset();
  batch_ = Batch::idle;
  reads_outstanding_ = 0;
  header_outstanding_ = false;
  sends_outstanding_ = 0;
  credits_to_return_ = 0;
  last_seq_ = 0;
  published_.clear();
  failure_.clear();
}

void LiveSession::connect() {
  proto::ConnectRequest request;
  request.kind = proto::RequestKind::live;
  request.selector_type = proto::SelectorType::name_hash;
  request.selector = proto::name_hash(*uri_.movie);
  add_token(request, uri_);
  rdma::ConnectOptions o;
  o.host = uri_.host;
  o.port = uri_.port;
  o.private_data = proto::encode(request);
  o.wanted_read_depth = options_.read_depth;
  o.send_queue_depth = options_.read_depth + 4;  // data Reads, the header Read, two credit messages
  o.recv_queue_depth = options_.credits;
  o.timeout = options_.connect_timeout;
  o.ack_timeout = options_.ack_timeout;
  o.hub = hub_.get();
  try {
    ep_ = rdma::connect(o);
  } catch (const rdma::ConnectRejected& r) {
    if (r.no_listener()) throw ClientError(ErrorKind::server_unreachable, "nothing listens on " + server() + " (is vod-server running there?)");
    auto reject = proto::decode_reject(r.private_data());
    if (!reject) throw ClientError(ErrorKind::rejected, server() + " refused the connection (" + r.what() + ") without a readable reason");
    throw ClientError(kind_of(reject->code), server() + " rejected live channel '" + *uri_.movie + "': " + proto::to_string(reject->code) + ": " + reject->reason);
  } catch (const rdma::ConnectFailed& e) {
    throw ClientError(ErrorKind::server_unreachable, std::string("cannot reach ") + server() + ": " + e.what());
  } catch (const rdma::NoDeviceError& e) {
    throw ClientError(ErrorKind::no_device, e.what());
  }
  auto accept = proto::decode_accept(ep_->accept_data);
  if (!accept) throw ClientError(ErrorKind::protocol_error, server() + " sent an accept that does not decode: " + accept.error().message);
  accept_ = *accept;
  if (accept_.movie.empty() || accept_.index.length < kHeaderSlot)
    throw ClientError(ErrorKind::protocol_error, server() + " accepted live channel '" + *uri_.movie + "' without a ring and a live header");
  depth_ = std::max(1u, std::min<unsigned>(ep_->initiator_depth, accept_.granted_read_depth));
  max_read_ = std::min<std::size_t>({accept_.max_message_size, ep_->limits.max_msg_size, std::max<std::size_t>(options_.chunk_size, 4096)});
  ep_->memory.push_back(rdma::register_memory(ep_->pd.get(), memory_.data(), memory_.size(), rdma::read_sink_access(ep_->limits),
                                              "the live viewer's buffers"));
  mr_ = ep_->memory.back().get();
  owner_ = hub_->add_owner([this](const ibv_wc& wc, rdma::WorkId id) { on_completion(wc, id); });

  // The catalog says which channel this is (and that the server calls it live).
  const proto::RegionDescriptor& catalog = accept_.catalog;
  if (catalog.length > options_.staging_bytes)
    throw ClientError(ErrorKind::protocol_error, "the catalog of " + server() + " (" + std::to_string(catalog.length) +
                                                     " bytes) is larger than the staging buffer; raise LiveOptions::staging_bytes");
  const auto deadline = Clock::now() + options_.connect_timeout;
  for (std::uint64_t at = 0, i = 0; at < catalog.length; at += max_read_, ++i) {
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(max_read_, catalog.length - at));
    if (int err = rdma::post_read(ep_->qp.get(), rdma::WorkId{owner_, kRead, static_cast<std::uint32_t>(i)}.pack(), memory_.data() + at, n,
                                  mr_->lkey, catalog.addr + at, catalog.rkey))
      throw ClientError(ErrorKind::connection_lost, std::string("posting the catalog Read failed: ") + std::strerror(err));
    ++reads_outstanding_;
  }
  while (reads_outstanding_ > 0) {
    hub_->poll();
    if (!failure_.empty()) throw ConnectionLost(failure_);
    if (reads_outstanding_ > 0 && !wait(deadline)) throw ClientError(ErrorKind::server_unreachable, "reading the catalog of " + server() + " timed out");
  }
  auto decoded = proto::decode_catalog(std::span<const std::uint8_t>(memory_.data(), catalog.length));
  if (!decoded) throw ClientError(ErrorKind::protocol_error, "the catalog of " + server() + " does not decode: " + decoded.error().message);
  if (accept_.movie_index >= decoded->entries.size() || decoded->entries[accept_.movie_index].name != *uri_.movie ||
      !(decoded->entries[accept_.movie_index].flags & proto::kEntryLive) || !decoded->entries[accept_.movie_index].movie.same_bytes(accept_.movie))
    throw ClientError(ErrorKind::protocol_error, server() + " accepted '" + *uri_.movie + "' with descriptors its catalog does not list as a live channel");
  channel_ = decoded->entries[accept_.movie_index];

  const bool rejoin = cursor_ != nullptr;
  cursor_ = std::make_unique<LiveCursor>(accept_.movie.length, options_.poll_interval.count() > 0);
  if (rejoin) cursor_->mark_rejoin();
  for (std::uint32_t slot = 0; slot < options_.credits; ++slot) post_recv(slot);
  if (options_.poll_interval.count() > 0) {
    next_poll_ = Clock::now();
  } else {
    credits_to_return_ = options_.credits;  // the first message of the connection: the client sends first
    return_credit(true);
  }
  log::info("client", "live channel '" + channel_.name + "' on " + server() + ": ring of " + std::to_string(accept_.movie.length) + " bytes, " +
                          std::to_string(depth_) + " Reads in flight, " +
                          (options_.poll_interval.count() > 0 ? "following the header" : std::to_string(options_.credits) + " credits") +
                          ", ACK timeout " + rdma::ack_timeout_text(*ep_));
}

bool LiveSession::wait(Clock::time_point deadline) {
  if (!hub_->armed()) {
    hub_->arm();
    return true;  // completions may have landed before the arming: look again first
  }
  auto until = deadline;
  if (options_.poll_interval.count() > 0 && batch_ == Batch::idle) until = std::min(until, next_poll_);
  const auto now = Clock::now();
  if (until <= now) return deadline > now;
  std::vector<pollfd> fds;
  for (int fd : hub_->fds()) fds.push_back({fd, POLLIN, 0});
  const std::size_t completion_fds = fds.size();
  fds.push_back({ep_->events.fd(), POLLIN, 0});
  fds.push_back({interrupter_.fd(), POLLIN, 0});
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
  const int n = poll(fds.data(), fds.size(), static_cast<int>(ms));
  if (interrupter_.raised()) throw Interrupted();
  if (n > 0) {
    for (std::size_t i = 0; i < completion_fds; ++i)
      if (fds[i].revents & POLLIN) hub_->consume();
    if (fds[completion_fds].revents & POLLIN) {
      while (auto e = ep_->events.next(std::chrono::milliseconds(0)))
        if (e->type() == RDMA_CM_EVENT_DISCONNECTED || e->type() == RDMA_CM_EVENT_DEVICE_REMOVAL)
          throw ConnectionLost(std::string("the server connection ended: ") + e->type_name());
    }
  }
  return Clock::now() < deadline;
}

LiveChunk LiveSession::read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    try {
      if (interrupter_.raised()) throw Interrupted();
      if (!ep_) throw ConnectionLost("not connected");
      pump();
      if (cursor_->finished()) return {0, cursor_->position(), false, false, true};
      if (batch_ == Batch::ready && !out.empty()) {
        const std::uint64_t from = batch_range_.begin + delivered_in_batch_;
        const std::uint64_t until = cursor_->deliverable_end({from, batch_range_.end});
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(out.size(), until - from));
        if (n == 0) {
          batch_ = Batch::idle;  // finishing: the rest of the batch is after the frame boundary
          continue;
        }
        const auto d = cursor_->deliver({from, from + n});
        std::memcpy(out.data(), memory_.data() + delivered_in_batch_, n);
        delivered_in_batch_ += n;
        if (from + n == batch_range_.end) batch_ = Batch::idle;
        stats_.bytes_delivered += n;
        const std::uint64_t now_us = realtime_us();
        while (!published_.empty() && published_.front().first <= from + n) {
          if (now_us >= published_.front().second) stats_.latency_us.record(now_us - published_.front().second);
          published_.pop_front();
        }
        stats_.cursor = cursor_->stats();
        return {n, from, d.discontinuity, d.end_of_stream};
      }
      if (cursor_->take_end_of_stream()) {
        stats_.cursor = cursor_->stats();
        return {0, cursor_->position(), false, true};
      }
      if (!wait(deadline)) return {0, cursor_->position(), false, false};
    } catch (const ConnectionLost& e) {
      reconnect(e.what());
    }
  }
}

void LiveSession::reconnect(const std::string& why) {
  // The server ends a connection when its token expires: say so, and do not knock again with it.
  refuse_expired_token(uri_);
  if (!options_.reconnect.in_place) {
    drop_connection();
    throw ClientError(ErrorKind::connection_lost, "lost the live connection to " + server() + ": " + why);
  }
  log::warn("client", "live connection to " + server() + " lost (" + why + "); reconnecting");
  Backoff backoff(options_.reconnect, Clock::now());
  std::string last = why;
  for (;;) {
    drop_connection();
    wait_until(backoff.next_attempt(), interrupter_);
    try {
      connect();
      ++stats_.reconnects;
      log::info("client", "reconnected to live channel '" + *uri_.movie + "' on " + server());
      return;
    } catch (const ConnectionLost& e) {
      last = e.what();
    } catch (const ClientError& e) {
      if (!retryable(e)) throw;
      last = e.what();
    }
    if (!backoff.failed(Clock::now()))
      throw ClientError(ErrorKind::connection_lost, "lost the live connection to " + server() + " and could not reconnect within " +
                                                        std::to_string(options_.reconnect.give_up_after.count() / 1000) + " s: " + last);
  }
}

}  // namespace vod::client
