// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ondemand/vod_transport.hpp"

#include <algorithm>
#include <stdexcept>

#include "vod/log.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/connection.hpp"
#include "windows/window_binding.hpp"

namespace vod::server::ondemand {

VodTransport::VodTransport(Context context) : ctx_(std::move(context)), failed_(ctx_.reactor, "server") {
  ctx_.completions.after_poll([this] { failed_.reap(); });  // a drain's last flush may have arrived
}

VodTransport::~VodTransport() {
  connections_.clear();
  failed_.clear();
}

void VodTransport::accept(cm::Accepting a) {
  rdma_cm_id* id = a.id.get();
  Device& device = *a.catalog->device;
  rdma::CompletionHub& hub = ctx_.completions.hub();
  proto::AcceptData accept = a.catalog->accept_for(a.admit.kind == Admit::Kind::movie ? a.admit.entry : proto::kNoMovie);
  accept.granted_read_depth = a.depth;
  auto c = std::make_unique<VodConnection>(*this, a.catalog, a.admit, a.peer);
  c->depth_ = a.depth;
  ibv_qp_init_attr attr{};
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  const MovieRegistration* m = a.admit.kind == Admit::Kind::movie ? a.catalog->movies.at(a.admit.entry).get() : nullptr;
  if (!device.binds_windows()) {
    ibv_pd* pd = device.pd.get();
    if (device.own_pds()) {
      // Its own PD, with a registration of exactly what it was granted: the catalog, and its movie
      // (a cached one: its segment table; its slots as it asks for them) with its index. Its QP is
      // rdma_cm's on that PD, so that an iWARP device brings it to RTS inside the accept.
      std::vector<windows::ConnectionPd::Span> spans{{a.catalog->bytes.data(), a.catalog->bytes.length()}};
      if (m) {
        if (m->movie->cached) spans.push_back({m->movie->cached->table().data(), m->movie->cached->table_length()});
        else spans.push_back({m->movie->bytes.data(), m->movie->size()});
        spans.push_back({m->movie->index_bytes.data(), m->movie->index_bytes.length()});
      }
      c->own_pd_.emplace(id->verbs, *ctx_.pinned, spans);  // throws cm::SetupRefused with the reason
      pd = c->own_pd_->pd();
      const auto& regions = c->own_pd_->regions();
      accept.catalog = regions[0];
      if (m) {
        (m->movie->cached ? accept.segments : accept.movie) = regions[1];
        accept.index = regions[2];
      }
    }
    if (ctx_.cache) {
      // With a segment cache: its requests' receives and its notifications, on the hub's CQ with
      // room reserved for all of them; receives posted before the accept.
      const std::uint16_t credits = ctx_.cache->options().request_credits;
      const std::uint32_t sends = SegmentChannel::send_depth(credits), recvs = SegmentChannel::recv_depth(credits);
      c->cq_ = rdma::CqShare(hub, id->verbs, sends + recvs);
      attr.send_cq = c->cq_.cq();
      attr.recv_cq = c->cq_.cq();
      attr.cap.max_send_wr = sends;
      attr.cap.max_recv_wr = recvs;
      c->qp_ = rdma::QueuePair(id, pd, attr);
      c->hub_owner_ = rdma::HubOwner(hub, [raw = c.get()](const ibv_wc& wc, rdma::WorkId wid) { raw->on_completion(wc, wid); });
      std::optional<SlotAccess> access;
      if (device.own_pds()) access.emplace(SlotAccess{*ctx_.slot_watchers, m ? a.admit.entry : proto::kNoMovie, kMaxSlotWindows, true, ctx_.pinned});
      c->channel_.emplace(*ctx_.cache, a.catalog, pd, c->qp_.get(), c->hub_owner_.id(), a.peer, channel_stats_, ctx_.reactor,
                          [raw = c.get()](const std::string& why) { raw->cut_off(why); }, std::move(access));
    } else {
      // The hub's CQ, with nothing reserved on it: the server posts nothing on this QP (Reads are
      // answered by the responder), so nothing of it ever completes.
      attr.send_cq = hub.reserve(id->verbs, 0);
      attr.recv_cq = attr.send_cq;
      attr.cap.max_send_wr = 1;
      attr.cap.max_recv_wr = 1;
      c->qp_ = rdma::QueuePair(id, pd, attr);
    }
    rdma::accept(id, proto::encode(accept), a.depth);
    c->state_ = State::accepting;
  } else {
    if (binding_ >= kMaxBinding) throw std::runtime_error(std::to_string(binding_) + " clients are binding windows already");
    // Room in the hub's CQ for everything its QP may complete: the binds (or a failed bind and the
    // flushes after it); with a segment cache, its requests' receives, its notifications and a
    // slot window's bind too.
    const std::uint16_t credits = ctx_.cache ? ctx_.cache->options().request_credits : 0;
    const std::uint32_t sends = 3 + (ctx_.cache ? SegmentChannel::send_depth(credits) : 0);  // catalog, movie (or table), index
    const std::uint32_t recvs = ctx_.cache ? SegmentChannel::recv_depth(credits) : 1;
    c->cq_ = rdma::CqShare(hub, id->verbs, sends + recvs);
    attr.send_cq = c->cq_.cq();
    attr.recv_cq = c->cq_.cq();
    attr.cap.max_send_wr = sends;
    attr.cap.max_recv_wr = recvs;
    c->own_qp_ = rdma::create_qp(device.pd.get(), attr);
    c->hub_owner_ = rdma::HubOwner(hub, [raw = c.get()](const ibv_wc& wc, rdma::WorkId wid) { raw->on_completion(wc, wid); });
    c->verbs_.emplace(id, device.pd.get(), c->own_qp_.get());
    c->windows_.emplace(*c->verbs_, device.rkeys);
    // Exactly what this client was granted: the catalog, and its movie (a cached one: its segment
    // table; its slots through a window each, as it asks for them) with its index.
    std::vector<windows::WindowSpan> spans{{a.catalog->mr.get(), accept.catalog}};
    if (m) {
      if (m->movie->cached) spans.push_back({m->table_mr.get(), accept.segments});
      else spans.push_back({m->movie_mr.get(), accept.movie});
      spans.push_back({m->index_mr.get(), accept.index});
    }
    // The QP to RTS and the binds posted; if that throws, the connection goes with this frame.
    const auto regions = c->windows_->start(spans, a.depth, 7, rdma::WorkId{c->hub_owner_.id(), kind_of(VodWork::bind), 0}.pack());
    accept.catalog = regions[0];
    if (m) {
      (m->movie->cached ? accept.segments : accept.movie) = regions[1];
      accept.index = regions[2];
    }
    if (ctx_.cache) {  // receives posted now that the QP is up, before the accept
      const std::uint32_t movie = m ? a.admit.entry : proto::kNoMovie;
      c->channel_.emplace(*ctx_.cache, a.catalog, device.pd.get(), c->own_qp_.get(), c->hub_owner_.id(), a.peer, channel_stats_, ctx_.reactor,
                          [raw = c.get()](const std::string& why) { raw->cut_off(why); }, SlotAccess{*ctx_.slot_watchers, movie, kMaxSlotWindows});
    }
    c->state_ = State::binding;
    c->binding_ = Counted(binding_);
    c->accept_data_ = proto::encode(accept);
  }
  c->route_ = ctx_.routes.add(id, *c);
  c->grant_ = std::move(a.grant);
  if (const auto deadline = c->grant_.deadline())
    c->expiry_ = ctx_.reactor.at(*deadline, [raw = c.get()] {
      log::info("auth", "disconnecting " + raw->peer() + ": its token expired (" + raw->what() + ")");
      raw->cut_off("its token expired while its windows were being bound");
    });
  c->id_ = std::move(a.id);  // ours from here
  VodConnection& kept = *c;
  connections_.emplace(c.get(), std::move(c));
  if (kept.state_ == State::accepting)
    log::info("server", "accept " + kept.peer_ + ": " + kept.what_ + ", generation " + std::to_string(accept.catalog_generation) + ", read depth " +
                            std::to_string(kept.depth_) + " (asked " + std::to_string(a.conn.responder_resources) + "), " +
                            std::to_string(ctx_.clients()) + " connected");
  if (kept.state_ == State::accepting) ctx_.metrics.count_accept(kept.kind_);
}

void VodTransport::accepted(VodConnection& c) {
  const auto bind_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - c.since_).count();
  log::info("server", "accept " + c.peer_ + ": " + c.what_ + ", generation " + std::to_string(c.catalog_->catalog.generation) + ", read depth " +
                          std::to_string(c.depth_) + ", " + std::to_string(c.windows_ ? c.windows_->windows() : 0) + " memory windows bound in " +
                          std::to_string(bind_us) + " us, " + std::to_string(ctx_.clients()) + " connected");
  ctx_.metrics.count_accept(c.kind_);
  if (ctx_.changed) ctx_.changed();
}

void VodTransport::fail(VodConnection& c, const std::string& why) {
  log::error("server", "cannot set up the connection from " + c.peer_ + ": " + why);
  ctx_.metrics.count_reject(proto::RejectCode::internal_error);
  rdma::reject(c.id(), proto::encode_reject(proto::RejectCode::internal_error, "the server could not set up the connection"));
  destroy(c);
}

void VodTransport::destroy(VodConnection& c) {
  auto node = connections_.extract(&c);
  if (node.empty()) return;
  std::unique_ptr<VodConnection> gone = std::move(node.mapped());
  // Given back now, whatever its QP still has to flush; no more CM events for it.
  gone->grant_.release();
  gone->expiry_.cancel();
  gone->binding_.reset();
  gone->route_.reset();
  if (gone->channel_) gone->channel_->close();
  if (gone->own_pd_) gone->own_pd_->invalidate();
  if (!gone->qp() || !gone->cq_.entries()) return;  // nothing of its QP can complete any more: it goes now
  // Drain before destroy: windows freed, QP in the error state, and every work request posted on
  // it completed (as a flush) before its room in the CQ is given back.
  if (gone->windows_) gone->windows_->invalidate();
  gone->drain_.begin(gone->qp(), gone->peer_);
  failed_.add(std::move(gone));
}

void VodTransport::cut_off_if(const std::function<std::optional<std::string>(const auth::Grant&)>& why) {
  std::vector<std::pair<VodConnection*, std::string>> gone;
  for (const auto& [key, c] : connections_)
    if (auto reason = why(c->grant_)) gone.emplace_back(c.get(), std::move(*reason));
  for (auto& [c, reason] : gone) {
    log::warn("auth", "disconnecting " + c->peer_ + ": " + reason);
    c->cut_off(reason);  // may fail it (not accepted yet): it leaves connections_, the others stay
  }
}

void VodTransport::cut_off_all() {
  std::vector<VodConnection*> all;
  for (const auto& [key, c] : connections_) all.push_back(c.get());
  for (VodConnection* c : all) c->cut_off("the server is stopping");
  connections_.clear();
}

void VodTransport::count(ServerMetrics::ConnectionCounts& counts) const {
  for (const auto& [key, c] : connections_) ++counts[{c->kind_, c->movie_}];
}

}  // namespace vod::server::ondemand
