// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/live_session.hpp"

#include <algorithm>
#include <cstring>
#include <ctime>

#include "engine/event_wait.hpp"
#include "live_session_buffer.hpp"
#include "live_watch.hpp"
#include "rdma/server_connection.hpp"
#include "vod/client/fleet.hpp"
#include "vod/client/read_engine.hpp"
#include "vod/client/reconnect.hpp"
#include "vod/cluster/etcd_url.hpp"
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
using live_buffer::kStatusSlot;

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
  if (!uri_.movie || !uri_.live)
    throw ClientError(ErrorKind::usage, "a live session needs a live channel URI: rdma://host[:port]/live/NAME");
  options_.credits = std::clamp<std::uint32_t>(options_.credits, 1, 4096);
  options_.staging_bytes = std::max<std::size_t>(options_.staging_bytes, 64 * 1024);
  memory_.resize(options_.staging_bytes + kHeaderSlot + options_.credits * kRecvSlot + kStatusSlot + kSendSlots * kSendSlot);
  if (uri_.cluster) {
    fleet_ = uri_;
    if (const unsigned ms = uri_.cluster->failover_ms) {
      const auto w = ReadEngine::ServerWatch::after(std::chrono::milliseconds(ms));
      watch_ = std::make_unique<Watch>();
      watch_->policy = {w.probe_every, w.hung_after, w.dead_after};
    }
  }
  try {
    if (fleet_) connect_in_fleet();
    else connect();
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

std::string LiveSession::server() const { return server_name(uri_); }

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
  ServerConnectOptions o;
  o.request.kind = proto::RequestKind::live;
  o.request.selector_type = proto::SelectorType::name_hash;
  o.request.selector = proto::name_hash(*uri_.movie);
  o.what = "live channel '" + *uri_.movie + "'";
  o.read_depth = options_.read_depth;
  o.send_queue_depth = options_.read_depth + 5;  // data Reads, the header Read, the status probe, two credit messages
  o.recv_queue_depth = options_.credits;
  o.timeout = options_.connect_timeout;
  o.ack_timeout = options_.ack_timeout;
  o.hub = hub_.get();
  ServerConnection c = connect_to(uri_, std::move(o));
  ep_ = std::move(c.endpoint);
  accept_ = c.accept;
  if (accept_.movie.empty() || accept_.index.length < kHeaderSlot)
    throw ClientError(ErrorKind::protocol_error,
                      server() + " accepted live channel '" + *uri_.movie + "' without a ring and a live header");
  depth_ = c.read_depth;
  max_read_ = std::min<std::size_t>(c.max_read, std::max<std::size_t>(options_.chunk_size, 4096));
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
    if (int err = rdma::post_read(ep_->qp.get(), rdma::WorkId{owner_, rdma::work_kind(Work::read), static_cast<std::uint32_t>(i)}.pack(),
                                  memory_.data() + at, n, mr_->lkey, catalog.addr + at, catalog.rkey))
      throw ClientError(ErrorKind::connection_lost, std::string("posting the catalog Read failed: ") + std::strerror(err));
    ++reads_outstanding_;
  }
  while (reads_outstanding_ > 0) {
    hub_->poll();
    if (!failure_.empty()) throw ConnectionLost(failure_);
    if (reads_outstanding_ > 0 && !wait(deadline))
      throw ClientError(ErrorKind::server_unreachable, "reading the catalog of " + server() + " timed out");
  }
  auto decoded = proto::decode_catalog(std::span<const std::uint8_t>(memory_.data(), catalog.length));
  if (!decoded) throw ClientError(ErrorKind::protocol_error, "the catalog of " + server() + " does not decode: " + decoded.error().message);
  if (accept_.movie_index >= decoded->entries.size() || decoded->entries[accept_.movie_index].name != *uri_.movie ||
      !(decoded->entries[accept_.movie_index].flags & proto::kEntryLive) ||
      !decoded->entries[accept_.movie_index].movie.same_bytes(accept_.movie))
    throw ClientError(ErrorKind::protocol_error,
                      server() + " accepted '" + *uri_.movie + "' with descriptors its catalog does not list as a live channel");
  channel_ = decoded->entries[accept_.movie_index];

  const bool rejoin = cursor_ != nullptr;
  cursor_ = std::make_unique<LiveCursor>(accept_.movie.length, options_.poll_interval.count() > 0);
  if (rejoin) cursor_->mark_rejoin();
  else if (options_.start_offset) cursor_->start_from(*options_.start_offset);
  for (std::uint32_t slot = 0; slot < options_.credits; ++slot) post_recv(slot);
  if (options_.poll_interval.count() > 0) {
    next_poll_ = Clock::now();
  } else {
    credits_to_return_ = options_.credits;  // the first message of the connection: the client sends first
    return_credit(true);
  }
  if (watch_) watch_->restart(Clock::now());
  log::info("client", "live channel '" + channel_.name + "' on " + server() + ": ring of " + std::to_string(accept_.movie.length) +
                          " bytes, " + std::to_string(depth_) + " Reads in flight, " +
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
  if (watch_)
    until = std::min({until, watch_->next_probe, watch_->last_completion + watch_->policy.dead_after + std::chrono::milliseconds(1)});
  const auto now = Clock::now();
  if (until <= now) return deadline > now;
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
  const std::vector<int> completion_fds = hub_->fds();
  const engine::EventsReady ready = engine::poll_events(completion_fds, ep_->events.fd(), &interrupter_, static_cast<int>(ms));
  if (ready.completions) hub_->consume();
  if (ready.control) {
    while (auto e = ep_->events.next(std::chrono::milliseconds(0)))
      if (e->type() == RDMA_CM_EVENT_DISCONNECTED || e->type() == RDMA_CM_EVENT_DEVICE_REMOVAL)
        throw ConnectionLost(std::string("the server connection ended: ") + e->type_name());
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

void LiveSession::connect_in_fleet() {
  const std::string what = "live channel '" + fleet_->movie.value_or("") + "'";
  const auto order = fleet_order(*fleet_, 0, lost_member_);
  MemberTries tries;
  const auto n = first_accepting(
      order, what, tries,
      [&](const PlacedMember& m) {
        uri_ = m.uri;
        connect();
      },
      [this] { drop_connection(); });
  if (!n)
    throw ClientError(ErrorKind::server_unreachable,
                      "no member of " + fleet_->cluster->etcd.to_string() + " could serve " + what + ": " + tries.refusals);
  log::info("cluster", what + " on " + order[*n].record.id() + " (" + std::to_string(*n + 1) + " of " + std::to_string(order.size()) +
                           " members that carry it)");
}

void LiveSession::reconnect(const std::string& why) {
  // The server ends a connection when its token expires: say so, and do not knock again with it.
  refuse_expired_token(uri_);
  if (!options_.reconnect.in_place) {
    drop_connection();
    throw ClientError(ErrorKind::connection_lost, "lost the live connection to " + server() + ": " + why);
  }
  log::warn("client",
            "live connection to " + server() + " lost (" + why + ")" + (fleet_ ? "; reconnecting in the fleet" : "; reconnecting"));
  if (fleet_) lost_member_ = cluster::format_host_port(uri_.host, uri_.port);
  drop_connection();
  const unsigned failed = reconnect_on_schedule(
      options_.reconnect, interrupter_, server(), why,
      [this] {
        if (fleet_) connect_in_fleet();
        else connect();
      },
      [this] { drop_connection(); });
  lost_member_.clear();
  ++stats_.reconnects;
  log::info("client",
            "reconnected to live channel '" + *uri_.movie + "' on " + server() + " after " + std::to_string(failed + 1) + " attempt(s)");
}

}  // namespace vod::client
