// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/viewer.hpp"

#include <algorithm>
#include <cstring>

#include "live/credits.hpp"
#include "vod/log.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/error.hpp"

namespace vod::server::live {

namespace {
constexpr std::size_t kSendSlot = 128;  // a notification (72 bytes) and room to grow
constexpr std::size_t kRecvSlot = proto::kLiveMessageMax;
}  // namespace

const char* to_string(Viewer::State s) noexcept {
  switch (s) {
    case Viewer::State::binding: return "binding";
    case Viewer::State::awaiting_credit: return "awaiting credit";
    case Viewer::State::joining: return "joining";
    case Viewer::State::streaming: return "streaming";
    case Viewer::State::draining: return "draining";
  }
  return "?";
}

Viewer::Viewer(rdma_cm_id* id, ibv_pd* pd, const rdma::DeviceLimits& limits, rdma::CompletionHub& hub, Depths depths, std::string peer,
               std::string channel, const WindowPlan* windows, const OwnPdPlan* own)
    : id_(id), hub_(hub), depths_(depths), peer_(std::move(peer)), channel_(std::move(channel)) {
  if (own) {
    own_pd_.emplace(id->verbs, *own->budget, own->spans);
    pd = own_pd_->pd();
    window_regions_ = own_pd_->regions();
  }
  const std::uint32_t max_wr = std::max(limits.max_qp_wr, 4u);
  depths_.send = std::clamp(depths_.send, 4u, max_wr);
  depths_.recv = std::clamp(depths_.recv, 1u, max_wr);
  depths_.signal_every = std::clamp(depths_.signal_every, 1u, depths_.send / 2);
  buffers_ = HostBuffer(depths_.send * kSendSlot + depths_.recv * kRecvSlot);
  // Local access only: the client never reads or writes these.
  mr_ = rdma::register_memory(pd, buffers_.data(), buffers_.length(), IBV_ACCESS_LOCAL_WRITE, "live message buffers for " + peer_);
  const std::uint32_t binds = windows ? static_cast<std::uint32_t>(windows->spans.size()) : 0;
  const std::uint32_t entries = depths_.send + depths_.recv + binds;
  cq_share_ = rdma::CqShare(hub, id->verbs, entries);
  ibv_cq* cq = cq_share_.cq();
  ibv_qp_init_attr attr{};
  attr.send_cq = cq;
  attr.recv_cq = cq;
  attr.qp_type = IBV_QPT_RC;
  attr.cap.max_send_wr = depths_.send + binds;  // the binds complete before the first notification
  attr.cap.max_recv_wr = depths_.recv;
  attr.cap.max_send_sge = 1;
  attr.cap.max_recv_sge = 1;
  attr.cap.max_inline_data = sizeof(proto::WireLiveNotify);
  const auto create = [&] {
    if (windows) own_qp_ = rdma::create_qp(pd, attr);
    else qp_ = rdma::QueuePair(id, pd, attr);
  };
  try {
    create();
  } catch (const rdma::RdmaError&) {
    attr.cap.max_inline_data = 0;  // no inline data on this device: sends come from the registered slots
    create();
  }
  inline_sends_ = attr.cap.max_inline_data >= sizeof(proto::WireLiveNotify);
  owner_ = hub.add_owner([this](const ibv_wc& wc, rdma::WorkId wid) {
    if (on_completion(wc, wid)) wants_pump_ = true;
  });
  try {
    if (windows) {
      window_verbs_.emplace(id, pd, own_qp_.get());
      binding_.emplace(*window_verbs_, *windows->rkeys);
      // The QP to RTS and the binds posted; on failure the binding has freed what it made.
      window_regions_ = binding_->start(windows->spans, windows->responder_resources, windows->rnr_retry,
                                        rdma::WorkId{owner_, rdma::work_kind(Work::bind), 0}.pack());
      state_ = State::binding;
    }
    for (std::uint32_t slot = 0; slot < depths_.recv; ++slot) post_recv(slot);
  } catch (...) {
    hub.remove_owner(owner_);
    throw;
  }
}

Viewer::~Viewer() { hub_.remove_owner(owner_); }

void Viewer::post_recv(std::uint32_t slot) {
  ibv_sge sge{reinterpret_cast<std::uint64_t>(buffers_.data() + depths_.send * kSendSlot + slot * kRecvSlot),
              static_cast<std::uint32_t>(kRecvSlot), mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = rdma::WorkId{owner_, rdma::work_kind(Work::recv), slot}.pack();
  wr.sg_list = &sge;
  wr.num_sge = 1;
  ibv_recv_wr* bad = nullptr;
  if (int err = ibv_post_recv(qp(), &wr, &bad))
    rdma::throw_error("ibv_post_recv", err, rdma::device_name(id_->verbs), "posting a receive for live credits");
  ++recvs_posted_;
}

void Viewer::fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
}

bool Viewer::on_completion(const ibv_wc& wc, rdma::WorkId id) {
  const auto kind = static_cast<Work>(id.kind);
  if (kind == Work::bind) {
    if (!binding_) return false;
    const auto after = binding_->on_completion(wc.status);
    if (after == windows::WindowBinding::State::bound && state_ == State::binding) {
      state_ = State::awaiting_credit;
      bound_ = true;
    } else if (after == windows::WindowBinding::State::failed && wc.status != IBV_WC_WR_FLUSH_ERR) {
      fail(binding_->failure());  // a flush: it was draining already
    }
    return false;
  }
  if (kind == Work::send) {
    // The send's sequence number from its low 24 bits: fewer than 2^24 are ever outstanding.
    std::uint64_t seqno = (sends_done_ & ~std::uint64_t{rdma::WorkId::kMaxIndex}) | id.index;
    if (seqno < sends_done_) seqno += std::uint64_t{rdma::WorkId::kMaxIndex} + 1;
    sends_done_ = std::max(sends_done_, seqno + 1);  // a signaled completion retires every send before it
    if (wc.status != IBV_WC_SUCCESS && wc.status != IBV_WC_WR_FLUSH_ERR)
      fail(std::string("a notification Send failed: ") + ibv_wc_status_str(wc.status));
    return wc.status == IBV_WC_SUCCESS && state_ != State::draining;
  }
  if (kind != Work::recv) return false;
  if (recvs_posted_) --recvs_posted_;
  if (wc.status != IBV_WC_SUCCESS) {
    if (wc.status != IBV_WC_WR_FLUSH_ERR) fail(std::string("a receive failed: ") + ibv_wc_status_str(wc.status));
    return false;
  }
  if (state_ == State::draining) return false;
  const std::uint8_t* slot = buffers_.data() + depths_.send * kSendSlot + id.index * kRecvSlot;
  auto credit = proto::decode_live_credit(proto::Bytes(slot, std::min<std::size_t>(wc.byte_len, kRecvSlot)));
  if (!credit) {
    ++stats_.bad_messages;
    fail("sent a message that is not a live credit: " + credit.error().message);
    return false;
  }
  credits_ = add_credits(credits_, credit->credits);
  stats_.credits_granted += credit->credits;
  acked_seq_ = std::max(acked_seq_, credit->acked_seq);
  try {
    post_recv(id.index);
  } catch (const rdma::RdmaError& e) {
    fail(e.what());
    return false;
  }
  if (state_ == State::awaiting_credit) state_ = State::joining;
  return true;
}

bool Viewer::send(const proto::LiveNotify& n, bool last) {
  const auto bytes = proto::encode(n);
  std::uint8_t* slot = buffers_.data() + (sends_posted_ % depths_.send) * kSendSlot;
  std::memcpy(slot, bytes.data(), bytes.size());
  // Signal every Nth send, and whenever the queue is about to fill, so its room is always known;
  // and the last of a pump, so that every send is covered by a signaled one (cm::QpDrain counts).
  const bool signal = last || sends_posted_ + 1 - last_signaled_ >= depths_.signal_every || sends_posted_ + 2 - sends_done_ >= depths_.send;
  ibv_sge sge{reinterpret_cast<std::uint64_t>(slot), static_cast<std::uint32_t>(bytes.size()), mr_->lkey};
  ibv_send_wr wr{};
  wr.wr_id = rdma::WorkId{owner_, rdma::work_kind(Work::send), static_cast<std::uint32_t>(sends_posted_ & rdma::WorkId::kMaxIndex)}.pack();
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = (signal ? IBV_SEND_SIGNALED : 0) | (inline_sends_ ? IBV_SEND_INLINE : 0);
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(qp(), &wr, &bad)) {
    fail(std::string("ibv_post_send of a notification failed: ") + std::strerror(err));
    return false;
  }
  ++sends_posted_;
  if (signal) last_signaled_ = sends_posted_;
  --credits_;
  ++stats_.notifications;
  stats_.coalesced += (n.flags & proto::kLiveCoalesced) != 0;
  return true;
}

void Viewer::pump(const ChannelView& view) {
  if (state_ == State::binding || state_ == State::awaiting_credit || state_ == State::draining || failed()) return;
  cursor_.phase = state_ == State::joining ? NotifyCursor::Phase::joining : NotifyCursor::Phase::streaming;
  const std::uint64_t outstanding = sends_posted_ - sends_done_;
  const SendRoom room{credits_, outstanding < depths_.send ? static_cast<std::uint32_t>(depths_.send - outstanding) : 0u};
  NotifyPlan plan = plan_notifications(view, cursor_, room);
  cursor_ = plan.cursor;
  if (cursor_.phase == NotifyCursor::Phase::streaming) state_ = State::streaming;
  // In order; a failed post fails the viewer, which then drains: nothing after it is sent.
  for (std::size_t i = 0; i < plan.notifications.size(); ++i)
    if (!send(plan.notifications[i], i + 1 == plan.notifications.size())) break;
}

void Viewer::begin_drain(const std::string& why) {
  if (state_ == State::draining) return;
  log::debug("live", peer_ + ": draining (" + why + ")");
  state_ = State::draining;
  if (binding_) binding_->invalidate();  // its windows' rkeys fail from now on
  if (own_pd_) own_pd_->invalidate();    // so do its own registrations
  drain_.begin(qp(), peer_);             // every outstanding work request completes as a flush
}

}  // namespace vod::server::live
