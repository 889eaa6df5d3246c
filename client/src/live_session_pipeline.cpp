// SPDX-License-Identifier: LGPL-2.1-or-later
// What a LiveSession posts on its QP and what completes there while it streams: a receive per
// credit for the server's notifications, credit messages back, batches of ring Reads each followed
// by a Read of the live header that validates them, and their completions on the shared CQ
// (on_completion, check_batch). pump() moves it on; live_session.cpp connects, reads and reconnects.
#include "vod/client/live_session.hpp"

#include <algorithm>
#include <cstring>

#include "live_session_buffer.hpp"
#include "live_watch.hpp"
#include "vod/log.hpp"
#include "vod/rdma/post.hpp"

namespace vod::client {

namespace {

using Clock = std::chrono::steady_clock;
using live_buffer::kHeaderSlot;
using live_buffer::kRecvSlot;
using live_buffer::kSendSlot;
using live_buffer::kSendSlots;

}  // namespace

void LiveSession::post_recv(std::uint32_t slot) {
  std::uint8_t* p = memory_.data() + options_.staging_bytes + kHeaderSlot + slot * kRecvSlot;
  ibv_sge sge{reinterpret_cast<std::uint64_t>(p), static_cast<std::uint32_t>(kRecvSlot), mr_->lkey};
  ibv_recv_wr wr{};
  wr.wr_id = rdma::WorkId{owner_, rdma::work_kind(Work::recv), slot}.pack();
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
  if (int err = rdma::post_send(ep_->qp.get(), rdma::WorkId{owner_, rdma::work_kind(Work::send), slot}.pack(), p,
                                static_cast<std::uint32_t>(bytes.size()), mr_->lkey, true, ep_->max_inline_data >= bytes.size()))
    throw ConnectionLost(std::string("posting a credit message failed: ") + std::strerror(err));
  ++sends_outstanding_;
  ++stats_.credit_messages;
  credits_to_return_ = 0;
}

void LiveSession::on_completion(const ibv_wc& wc, rdma::WorkId id) {
  if (watch_) watch_->last_completion = Clock::now();
  if (wc.status != IBV_WC_SUCCESS) {
    if (failure_.empty()) failure_ = std::string("a work request failed: ") + ibv_wc_status_str(wc.status);
    return;
  }
  switch (static_cast<Work>(id.kind)) {
    case Work::read:
      if (reads_outstanding_) --reads_outstanding_;
      check_batch();
      return;
    case Work::header:
      header_outstanding_ = false;
      ++stats_.header_reads;
      check_batch();
      return;
    case Work::recv: on_notification(id.index, wc.byte_len); return;
    case Work::send:
      if (sends_outstanding_) --sends_outstanding_;
      return;
    case Work::status: on_status(); return;
    default: return;
  }
}

void LiveSession::on_notification(std::size_t slot, std::size_t length) {
  const std::uint8_t* p = memory_.data() + options_.staging_bytes + kHeaderSlot + slot * kRecvSlot;
  auto n = proto::decode_live_notify(proto::Bytes(p, std::min(length, kRecvSlot)));
  if (!n) {
    if (failure_.empty()) failure_ = "the server sent a notification that does not decode: " + n.error().message;
    return;
  }
  if (last_seq_ && n->seq != last_seq_ + 1)
    log::warn("client", "live notification " + std::to_string(n->seq) + " after " + std::to_string(last_seq_));
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
  if (int err = rdma::post_read(ep_->qp.get(), rdma::WorkId{owner_, rdma::work_kind(Work::header), 0}.pack(), slot, kHeaderSlot, mr_->lkey,
                                accept_.index.addr, accept_.index.rkey))
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
    if (int err = rdma::post_read(ep_->qp.get(), rdma::WorkId{owner_, rdma::work_kind(Work::read), i}.pack(),
                                  memory_.data() + (at - r->begin), n, mr_->lkey, accept_.movie.addr + pos, accept_.movie.rkey))
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
  auto h =
      proto::decode_live_header(std::span<const std::uint8_t>(memory_.data() + options_.staging_bytes, kHeaderSlot), accept_.movie.length);
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

void LiveSession::post_status_probe() {
  const auto now = Clock::now();
  if (watch_->probe_outstanding || now < watch_->next_probe ||
      accept_.catalog.length < proto::kServerStatusOffset + proto::kServerStatusLength)
    return;
  if (int err = rdma::post_read(ep_->qp.get(), rdma::WorkId{owner_, rdma::work_kind(Work::status), 0}.pack(), status_slot(),
                                static_cast<std::uint32_t>(proto::kServerStatusLength), mr_->lkey,
                                accept_.catalog.addr + proto::kServerStatusOffset, accept_.catalog.rkey))
    throw ConnectionLost(std::string("posting the status probe failed: ") + std::strerror(err));
  if (reads_outstanding_ == 0 && !header_outstanding_) watch_->last_completion = now;  // the dead clock starts now
  watch_->probe_outstanding = true;
  watch_->probe_posted = now;
  watch_->next_probe = now + watch_->policy.probe_every;
}

std::uint8_t* LiveSession::status_slot() noexcept {
  return memory_.data() + options_.staging_bytes + kHeaderSlot + options_.credits * kRecvSlot;
}

void LiveSession::on_status() {
  // A failed probe never gets here: it fails the connection (on_completion's failure_).
  if (!watch_ || !watch_->probe_outstanding) return;
  watch_->probe_outstanding = false;
  if (auto why =
          watch_->heartbeat.observe_probe({status_slot(), proto::kServerStatusLength}, watch_->probe_posted, watch_->last_completion)) {
    log::warn("client", "cannot read the status words of " + server() + " (" + *why + "); not watching them any more");
    watch_.reset();
  }
}

void LiveSession::watch_step() {
  post_status_probe();
  const bool outstanding = watch_->probe_outstanding || reads_outstanding_ > 0 || header_outstanding_;
  // A live viewer waits for the server's process whatever it does: a heartbeat that stood still is a
  // member to leave, not only a fault's.
  const auto j = engine::judge(watch_->heartbeat, {Clock::now(), outstanding, watch_->last_completion, std::chrono::microseconds(0), true},
                               watch_->policy);
  if (j.verdict != engine::Verdict::alive) throw ConnectionLost(j.why);
}

void LiveSession::pump() {
  hub_->poll();
  if (!failure_.empty()) throw ConnectionLost(failure_);
  if (watch_) watch_step();
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

}  // namespace vod::client
