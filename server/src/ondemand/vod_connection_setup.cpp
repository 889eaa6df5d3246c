// SPDX-License-Identifier: LGPL-2.1-or-later
// Building a VoD connection (VodConnection::set_up) and giving back what it holds (retire): the
// connection makes its own insides, its transport only asks.
#include <stdexcept>

#include "ondemand/vod_connection.hpp"
#include "vod/log.hpp"
#include "vod/rdma/connection.hpp"

namespace vod::server::ondemand {

namespace {
// An RC QP's attributes: one SGE each way, room for `sends` and `recvs` work requests.
ibv_qp_init_attr qp_attr(std::uint32_t sends, std::uint32_t recvs) {
  ibv_qp_init_attr attr{};
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_send_wr = sends;
  attr.cap.max_recv_wr = recvs;
  return attr;
}
}  // namespace

void VodConnection::set_up(cm::Accepting& a, const Setup& s) {
  depth_ = a.depth;
  proto::AcceptData accept = a.catalog->accept_for(a.admit.kind == Admit::Kind::movie ? a.admit.entry : proto::kNoMovie);
  accept.granted_read_depth = a.depth;
  if (a.catalog->device->binds_windows()) set_up_windows(a, s, accept);
  else set_up_shared_qp(a, s, accept);
  route_ = s.routes.add(a.id.get(), *this);
  grant_ = std::move(a.grant);
  if (const auto deadline = grant_.deadline())
    expiry_ = s.reactor.at(*deadline, [this] {
      log::info("auth", "disconnecting " + peer_ + ": its token expired (" + what_ + ")");
      cut_off("its token expired while its windows were being bound");
    });
  id_ = std::move(a.id);  // ours from here
}

void VodConnection::set_up_shared_qp(const cm::Accepting& a, const Setup& s, proto::AcceptData& accept) {
  rdma_cm_id* id = a.id.get();
  Device& device = *a.catalog->device;
  const MovieRegistration* m = a.admit.kind == Admit::Kind::movie ? a.catalog->movies.at(a.admit.entry).get() : nullptr;
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
    own_pd_.emplace(id->verbs, *s.pinned, spans);  // throws cm::SetupRefused with the reason
    pd = own_pd_->pd();
    const auto& regions = own_pd_->regions();
    accept.catalog = regions[0];
    if (m) {
      (m->movie->cached ? accept.segments : accept.movie) = regions[1];
      accept.index = regions[2];
    }
  }
  if (s.cache) {
    // With a segment cache: its requests' receives and its notifications, on the hub's CQ with
    // room reserved for all of them; receives posted before the accept.
    const std::uint16_t credits = s.cache->options().request_credits;
    const std::uint32_t sends = SegmentChannel::send_depth(credits), recvs = SegmentChannel::recv_depth(credits);
    cq_ = rdma::CqShare(s.hub, id->verbs, sends + recvs);
    ibv_qp_init_attr attr = qp_attr(sends, recvs);
    attr.send_cq = attr.recv_cq = cq_.cq();
    qp_ = rdma::QueuePair(id, pd, attr);
    hub_owner_ = rdma::HubOwner(s.hub, [this](const ibv_wc& wc, rdma::WorkId wid) { on_completion(wc, wid); });
    std::optional<SlotAccess> access;
    if (device.own_pds())
      access.emplace(SlotAccess{*s.slot_watchers, m ? a.admit.entry : proto::kNoMovie, s.max_slot_windows, true, s.pinned});
    channel_.emplace(
        *s.cache, a.catalog, pd, qp_.get(), hub_owner_.id(), a.peer, s.channel_stats, s.reactor,
        [this](const std::string& why) { cut_off(why); }, std::move(access));
  } else {
    // The hub's CQ, with nothing reserved on it: the server posts nothing on this QP (Reads are
    // answered by the responder), so nothing of it ever completes.
    ibv_qp_init_attr attr = qp_attr(1, 1);
    attr.send_cq = attr.recv_cq = s.hub.reserve(id->verbs, 0);
    qp_ = rdma::QueuePair(id, pd, attr);
  }
  rdma::accept(id, proto::encode(accept), a.depth);
  state_ = State::accepting;
}

void VodConnection::set_up_windows(const cm::Accepting& a, const Setup& s, proto::AcceptData& accept) {
  rdma_cm_id* id = a.id.get();
  Device& device = *a.catalog->device;
  const MovieRegistration* m = a.admit.kind == Admit::Kind::movie ? a.catalog->movies.at(a.admit.entry).get() : nullptr;
  // Room in the hub's CQ for everything its QP may complete: the binds (or a failed bind and the
  // flushes after it); with a segment cache, its requests' receives, its notifications and a slot
  // window's bind too.
  const std::uint16_t credits = s.cache ? s.cache->options().request_credits : 0;
  const std::uint32_t sends = 3 + (s.cache ? SegmentChannel::send_depth(credits) : 0);  // catalog, movie (or table), index
  const std::uint32_t recvs = s.cache ? SegmentChannel::recv_depth(credits) : 1;
  cq_ = rdma::CqShare(s.hub, id->verbs, sends + recvs);
  ibv_qp_init_attr attr = qp_attr(sends, recvs);
  attr.send_cq = attr.recv_cq = cq_.cq();
  own_qp_ = rdma::create_qp(device.pd.get(), attr);
  hub_owner_ = rdma::HubOwner(s.hub, [this](const ibv_wc& wc, rdma::WorkId wid) { on_completion(wc, wid); });
  verbs_.emplace(id, device.pd.get(), own_qp_.get());
  windows_.emplace(*verbs_, device.rkeys);
  // Exactly what this client was granted: the catalog, and its movie (a cached one: its segment
  // table; its slots through a window each, as it asks for them) with its index.
  std::vector<windows::WindowSpan> spans{{a.catalog->mr.get(), accept.catalog}};
  if (m) {
    if (m->movie->cached) spans.push_back({m->table_mr.get(), accept.segments});
    else spans.push_back({m->movie_mr.get(), accept.movie});
    spans.push_back({m->index_mr.get(), accept.index});
  }
  // The QP to RTS and the binds posted; if that throws, the connection goes with its caller's frame.
  const auto regions = windows_->start(spans, a.depth, 7, rdma::WorkId{hub_owner_.id(), rdma::work_kind(VodWork::bind), 0}.pack());
  accept.catalog = regions[0];
  if (m) {
    (m->movie->cached ? accept.segments : accept.movie) = regions[1];
    accept.index = regions[2];
  }
  if (s.cache) {  // receives posted now that the QP is up, before the accept
    const std::uint32_t movie = m ? a.admit.entry : proto::kNoMovie;
    channel_.emplace(
        *s.cache, a.catalog, device.pd.get(), own_qp_.get(), hub_owner_.id(), a.peer, s.channel_stats, s.reactor,
        [this](const std::string& why) { cut_off(why); }, SlotAccess{*s.slot_watchers, movie, s.max_slot_windows});
  }
  state_ = State::binding;
  binding_ = Counted(s.binding);
  accept_data_ = proto::encode(accept);
}

bool VodConnection::retire() {
  // Given back now, whatever its QP still has to flush; no more CM events for it.
  grant_.release();
  expiry_.cancel();
  binding_.reset();
  route_.reset();
  if (channel_) channel_->close();
  if (own_pd_) own_pd_->invalidate();
  if (!qp() || !cq_.entries()) return false;  // nothing of its QP can complete any more
  // Drain before destroy: windows freed, QP in the error state, and every work request posted on
  // it completed (as a flush) before its room in the CQ is given back.
  if (windows_) windows_->invalidate();
  drain_.begin(qp(), peer_);
  return true;
}

}  // namespace vod::server::ondemand
