// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/live_session.hpp"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <ctime>

#include "vod/client/reconnect.hpp"
#include "vod/log.hpp"
#include "vod/protocol/name_hash.hpp"
#include "vod/rdma/error.hpp"
#include "vod/rdma/post.hpp"

namespace vod::client {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kHeaderSlot = sizeof(proto::WireLiveHeader);
constexpr std::size_t kRecvSlot = proto::kLiveMessageMax;
constexpr std::size_t kSendSlot = 64;
constexpr std::uint32_t kSendSlots = 2;

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
                          (options_.poll_interval.count() > 0 ? "following the header" : std::to_string(options_.credits) + " credits"));
}

void LiveSession::post_recv(std::uint32_t slot) {
  std::uint8_t* p = memory_.data() + options_.staging_bytes + kHeaderSlot + slot * kRecvSlot;
  ibv_sge sge{reinterpret_cast<std::uint64_t>(p), static_cast<std::uint32_t>(kRecvSlot), mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = rdma::WorkId{owner_, kRecv, slot}.pack();
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int err = ibv_post_recv(ep_->qp.get(), &wr, &bad)) throw ConnectionLost(std::string("ibv_post_recv failed: ") + std::strerror(err));
}

void LiveSession::return_credit(bool force) {
  if (options_.poll_interval.count() > 0 || credits_to_return_ == 0 || sends_outstanding_ >= kSendSlots) return;
  if (!force && credits_to_return_ < std::max<std::uint32_t>(1, options_.credits / 2)) return;
  const auto bytes = proto::encode(proto::LiveCredit{credits_to_return_, last_seq_});
  const std::uint32_t slot = next_send_slot_++ % kSendSlots;
  std::uint8_t* p = memory_.data() + memory_.size() - kSendSlots * kSendSlot + slot * kSendSlot;
  std::memcpy(p, bytes.data(), bytes.size());
  ibv_sge sge{reinterpret_cast<std::uint64_t>(p), static_cast<std::uint32_t>(bytes.size()), mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = rdma::WorkId{owner_, kSend, slot}.pack();
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED | (ep_->max_inline_data >= bytes.size() ? IBV_SEND_INLINE : 0);
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(ep_->qp.get(), &wr, &bad)) throw ConnectionLost(std::string("posting a credit message failed: ") + std::strerror(err));
  ++sends_outstanding_;
  ++stats_.credit_messages;
  credits_to_return_ = 0;
}

void LiveSession::on_completion(const ibv_wc& wc, rdma::WorkId id) {
  if (wc.status != IBV_WC_SUCCESS) {
    if (failure_.empty()) failure_ = std::string("a work request failed: ") + ibv_wc_status_str(wc.status);
    return;
  }
  switch (id.kind) {
    case kRead:
      if (reads_outstanding_) --reads_outstanding_;
      check_batch();
      return;
    case kHeader:
      header_outstanding_ = false;
      ++stats_.header_reads;
      check_batch();
      return;
    case kRecv:
      on_notification(id.index, wc.byte_len);
      return;
    case kSend:
      if (sends_outstanding_) --sends_outstanding_;
      return;
    default:
      return;
  }
}

void LiveSession::on_notification(std::size_t slot, std::size_t length) {
  const std::uint8_t* p = memory_.data() + options_.staging_bytes + kHeaderSlot + slot * kRecvSlot;
  auto n = proto::decode_live_notify(proto::Bytes(p, std::min(length, kRecvSlot)));
  if (!n) {
    if (failure_.empty()) failure_ = "the server sent a notification that does not decode: " + n.error().message;
    return;
  }
  if (last_seq_ && n->seq != last_seq_ + 1) log::warn("client", "live notification " + std::to_string(n->seq) + " after " + std::to_string(last_seq_));
  last_seq_ = n->seq;
  ++stats_.notifications;
  stats_.coalesced += (n->flags & proto::kLiveCoalesced) != 0;
  cursor_->on_notify(*n);
  if (n->length > 0) published_.emplace_back(n->stream_offset + n->length, n->publish_time_us);
  try {
    post_recv(static_cast<std::uint32_t>(slot));
  } catch (const ConnectionLost& e) {
    failure_ = e.what();
    return;
  }
  ++credits_to_return_;
}

void LiveSession::post_header_read() {
  std::uint8_t* slot = memory_.data() + options_.staging_bytes;
  if (int err = rdma::post_read(ep_->qp.get(), rdma::WorkId{owner_, kHeader, 0}.pack(), slot, kHeaderSlot, mr_->lkey, accept_.index.addr,
                                accept_.index.rkey))
    throw ConnectionLost(std::string("posting the live header Read failed: ") + std::strerror(err));
  header_outstanding_ = true;
}

void LiveSession::post_batch() {
  const std::uint64_t budget = std::min<std::uint64_t>(options_.staging_bytes, std::uint64_t{std::max(1u, depth_ - 1)} * max_read_);
  auto r = cursor_->next_read(budget);
  if (!r) return;
  const std::uint64_t ring = accept_.movie.length;
  std::uint32_t i = 0;
  for (std::uint64_t at = r->begin; at < r->end; ++i) {
    const std::uint64_t pos = at % ring;
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>({max_read_, r->end - at, ring - pos}));
    if (int err = rdma::post_read(ep_->qp.get(), rdma::WorkId{owner_, kRead, i}.pack(), memory_.data() + (at - r->begin), n, mr_->lkey,
                                  accept_.movie.addr + pos, accept_.movie.rkey))
      throw ConnectionLost(std::string("posting a ring Read failed: ") + std::strerror(err));
    ++reads_outstanding_;
    at += n;
  }
  // The same QP executes Reads in order: this header is read after the bytes above.
  post_header_read();
  batch_range_ = *r;
  header_only_ = false;
  batch_ = Batch::reading;
}

void LiveSession::check_batch() {
  if (batch_ != Batch::reading || reads_outstanding_ > 0 || header_outstanding_) return;
  auto h = proto::decode_live_header(std::span<const std::uint8_t>(memory_.data() + options_.staging_bytes, kHeaderSlot), accept_.movie.length);
  if (!h) {
    if (h.error().fault == proto::DecodeFault::inconsistent && h.error().message.find("torn") != std::string::npos) {
      ++stats_.torn_headers;  // caught mid-update: a later read still validates the bytes before it
      try {
        post_header_read();
      } catch (const ConnectionLost& e) {
        failure_ = e.what();
      }
      return;
    }
    if (failure_.empty()) failure_ = "the live header of '" + channel_.name + "' does not decode: " + h.error().message;
    return;
  }
  if (header_only_) {
    cursor_->on_header(*h);
    batch_ = Batch::idle;
    return;
  }
  batch_ = cursor_->validate(batch_range_, *h) ? Batch::ready : Batch::idle;
  delivered_in_batch_ = 0;
}

void LiveSession::pump() {
  hub_->poll();
  if (!failure_.empty()) throw ConnectionLost(failure_);
  return_credit(false);
  if (batch_ != Batch::idle) return;
  if (options_.poll_interval.count() > 0 && Clock::now() >= next_poll_) {
    next_poll_ = Clock::now() + options_.poll_interval;
    post_header_read();
    header_only_ = true;
    batch_ = Batch::reading;
    return;
  }
  post_batch();
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
