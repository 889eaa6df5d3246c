// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ondemand/segment_channel.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vod/log.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/device.hpp"
#include "vod/rdma/error.hpp"
#include "vod/rdma/post.hpp"

namespace vod::server::ondemand {

namespace {
constexpr std::size_t kSlot = proto::kSegmentMessageMax;
}

SegmentChannel::SegmentChannel(cache::SegmentCache& cache, std::shared_ptr<CatalogRegistration> catalog, ibv_pd* pd, ibv_qp* qp,
                               std::uint32_t owner, std::string peer, ChannelStats& stats, loop::Reactor& reactor,
                               std::function<void(const std::string&)> fatal, std::optional<SlotAccess> access)
    : cache_(cache),
      catalog_(std::move(catalog)),
      qp_(qp),
      owner_(owner),
      peer_(std::move(peer)),
      stats_(stats),
      credits_(cache.options().request_credits),
      buffers_((recv_depth(credits_) + send_depth(credits_)) * kSlot),
      access_(std::move(access)),
      reactor_(reactor),
      fatal_(std::move(fatal)),
      self_(std::make_shared<SegmentChannel*>(this)) {
  mr_ =
      rdma::register_memory(pd, buffers_.data(), buffers_.mapped_length(), IBV_ACCESS_LOCAL_WRITE, "segment message buffers for " + peer_);
  if (access_) {
    const auto layout = cache_.layout();
    windows_.emplace(access_->watchers, pd, catalog_->device->rkeys, access_->max_windows,
                     windows::window_keep(layout.grace_ms, layout.read_deadline_ms),
                     access_->own_pd ? windows::SlotWindows::Kind::region : windows::SlotWindows::Kind::window, access_->budget);
  }
  for (std::uint32_t i = 0; i < send_depth(credits_) - 1; ++i) free_sends_.push_back(send_depth(credits_) - 2 - i);
  for (std::uint32_t i = 0; i < recv_depth(credits_); ++i) post_recv(i);
}

SegmentChannel::~SegmentChannel() { close(); }

void SegmentChannel::close() noexcept {
  closed_ = true;
  *self_ = nullptr;
  queued_.clear();
  lease_wait_.cancel();
  give_up_.cancel();
  if (windows_) windows_->clear();  // their rkeys read nothing from now on
}

void SegmentChannel::give_up(std::string why) {
  if (closed_ || give_up_.armed()) return;
  queued_.clear();
  closed_ = true;  // nothing more goes out; completions are still counted for the drain
  log::warn("cache", peer_ + ": " + why + "; disconnecting it (its unanswered requests would wait in vain)");
  give_up_ = reactor_.at(std::chrono::steady_clock::now(), [fatal = fatal_, why = std::move(why)] {
    if (fatal) fatal(why);  // may destroy this channel: the handler holds copies of what it needs
  });
}

void SegmentChannel::post_recv(std::uint32_t slot) {
  if (int err = rdma::post_recv(qp_, rdma::WorkId{owner_, rdma::work_kind(VodWork::recv), slot}.pack(), buffers_.data() + slot * kSlot,
                                static_cast<std::uint32_t>(kSlot), mr_->lkey))
    rdma::throw_error("ibv_post_recv", err, peer_, "posting a receive for segment requests");
  ++outstanding_;
}

std::string SegmentChannel::on_completion(const ibv_wc& wc, VodWork kind, std::uint32_t index) {
  if (outstanding_ > 0) --outstanding_;
  if (closed_) return {};
  if (kind == VodWork::slot_bind) {
    binding_ = false;
    const bool ok = wc.status == IBV_WC_SUCCESS;
    if (windows_) windows_->bind_done(index, ok, std::chrono::steady_clock::now());
    if (wc.status == IBV_WC_WR_FLUSH_ERR) return {};
    if (!ok)
      return std::string("binding a memory window over cache slot ") + std::to_string(index) + " failed: " + ibv_wc_status_str(wc.status);
    post_sends();
    return {};
  }
  if (kind == VodWork::send) {
    if (wc.status == IBV_WC_WR_FLUSH_ERR) return {};
    if (wc.status != IBV_WC_SUCCESS) return std::string("a segment notification Send failed: ") + ibv_wc_status_str(wc.status);
    free_sends_.push_back(index);
    post_sends();
    return {};
  }
  if (wc.status == IBV_WC_WR_FLUSH_ERR) return {};
  if (wc.status != IBV_WC_SUCCESS) return std::string("a receive for segment requests failed: ") + ibv_wc_status_str(wc.status);
  // Copied out first, so the receive goes back at once: the client's next request has one.
  const std::size_t length = std::min<std::size_t>(wc.byte_len, kSlot);
  std::uint8_t message[kSlot];
  std::memcpy(message, buffers_.data() + index * kSlot, length);
  try {
    post_recv(index);
  } catch (const rdma::RdmaError& e) {
    return e.what();
  }
  auto request = proto::decode_segment_request(proto::Bytes(message, length));
  if (!request) {
    if (stats_.bad_messages++ < 16 || stats_.bad_messages % 1024 == 0)
      log::warn("cache", peer_ + ": dropped a message that is not a segment request: " + request.error().message);
    return {};
  }
  ++stats_.requests;
  if (unanswered_ >= credits_) {
    ++stats_.credit_violations;
    give_up("sent a segment request beyond its " + std::to_string(credits_) + " credits (" + std::to_string(unanswered_) +
            " unanswered): a protocol violation");
    return {};
  }
  ++unanswered_;
  handle(*request);
  return {};
}

void SegmentChannel::handle(const proto::SegmentRequest& r) {
  proto::SegmentNotify n;
  n.movie_index = r.movie_index;
  n.segment = r.segment;
  n.request_id = r.request_id;
  const auto& movies = catalog_->movies;
  if (r.movie_index >= movies.size() || !movies[r.movie_index]->movie->cached) {
    n.status = proto::SegmentStatus::unknown_movie;
    return answer({n, nullptr});
  }
  if (access_ && r.movie_index != access_->movie_index) {
    // Its windows are for the movie its token was checked for: another movie's segments share
    // the arena, and this connection reads none of them.
    if (stats_.refused++ < 16)
      log::warn("auth", peer_ + ": refused segment " + std::to_string(r.segment) + " of catalog entry " + std::to_string(r.movie_index) +
                            ": its grant is for another movie");
    n.status = proto::SegmentStatus::refused;
    return answer({n, nullptr});
  }
  // One cache waiter per segment and connection: a request repeated while the first is unanswered
  // is answered with it.
  if (auto it = asked_.find(segment_key(n.movie_index, n.segment)); it != asked_.end()) {
    ++stats_.coalesced;
    it->second.push_back(n.request_id);
    return;
  }
  asked_.emplace(segment_key(n.movie_index, n.segment), std::vector<std::uint32_t>{});
  ask_cache(movies[r.movie_index]->movie->cached, n, std::min(r.ahead, kMaxAhead));
}

void SegmentChannel::resolved(const proto::SegmentNotify& n, proto::SegmentStatus status, const proto::SegmentEntry& entry,
                              std::shared_ptr<cache::CachedFile> file) {
  // With windows, the rkey is its window's, set as it goes out.
  const auto rkey = windows_ ? std::nullopt : std::optional<std::uint32_t>(catalog_->device->arena->rkey);
  const proto::SegmentNotify settled = settle(n, status, entry, rkey);
  std::vector<std::uint32_t> also;
  if (auto node = asked_.extract(segment_key(n.movie_index, n.segment)); !node.empty()) also = std::move(node.mapped());
  const bool ok = status == proto::SegmentStatus::ok;
  answer({settled, ok ? file : nullptr});
  for (std::uint32_t id : also) {
    proto::SegmentNotify copy = settled;
    copy.request_id = id;
    answer({copy, ok ? file : nullptr});
  }
}

void SegmentChannel::ask_cache(std::shared_ptr<cache::CachedFile> file, proto::SegmentNotify n, std::uint16_t ahead) {
  std::weak_ptr<SegmentChannel*> weak = self_;
  // This connection asks: its grace protects its fair share of the slots (bit 62 keeps connections
  // apart from UDP addresses and from the server itself).
  const cache::Requester who = (1ull << 62) | owner_;
  cache_.request(
      file, n.segment, ahead,
      [weak, n, file](proto::SegmentStatus status, const proto::SegmentEntry& entry) mutable {
        auto self = weak.lock();
        if (!self || !*self) return;  // the connection went meanwhile
        (*self)->resolved(n, status, entry, std::move(file));
      },
      who);
}

void SegmentChannel::answer(Answer a) {
  if (closed_) return;
  // At most credits_ answers are ever queued: no connection has more requests unanswered.
  queued_.push_back(std::move(a));
  post_sends();
}

SegmentChannel::Front SegmentChannel::ready_front() {
  Answer& a = queued_.front();
  if (!windows_ || a.notify.status != proto::SegmentStatus::ok || a.ready) return Front::send;
  const auto now = std::chrono::steady_clock::now();
  if (proto::pack(a.file->entry(a.notify.segment)) != a.notify.entry) {
    // The segment left that slot since it was found there: no window over what the slot holds
    // now. Asked for again; the answer comes when it is resident.
    Answer stale = std::move(a);
    queued_.pop_front();
    ask_cache(std::move(stale.file), stale.notify, 0);
    return Front::again;
  }
  const std::uint32_t slot = static_cast<std::uint32_t>(a.notify.entry & proto::kMaxSlot);
  if (auto rkey = windows_->bound(slot, now)) {
    a.notify.rkey = *rkey;
    a.ready = true;
    return Front::send;
  }
  if (binding_) return Front::wait;
  std::optional<windows::SlotWindows::ToBind> bind;
  const std::uint64_t segment_size = cache_.options().segment_size;
  const std::uint8_t* at = reinterpret_cast<const std::uint8_t*>(catalog_->device->arena_addr) + std::uint64_t{slot} * segment_size;
  try {
    bind = windows_->make(slot, at, a.file->segment_length(a.notify.segment), now);
  } catch (const windows::BudgetExhausted& e) {
    if (stats_.busy++ < 16 || stats_.busy % 1024 == 0)
      log::warn("auth", peer_ + ": segment " + std::to_string(a.notify.segment) + ": " + e.what() + "; answered busy");
    a.notify.status = proto::SegmentStatus::busy;
    a.notify.entry = 0;
    a.notify.rkey = 0;
    return Front::send;
  } catch (const rdma::RdmaError& e) {
    log::error("auth", peer_ + ": no memory window for cache slot " + std::to_string(slot) + ": " + e.what() + "; refusing the segment");
    a.notify.status = proto::SegmentStatus::refused;
    a.notify.entry = 0;
    return Front::send;
  }
  if (!bind) {  // max_windows held, every one still leased: the first lease's end is soon
    if (!lease_wait_.armed())
      if (auto when = windows_->expiry()) lease_wait_ = reactor_.at(*when, [this] { post_sends(); });
    return Front::wait;
  }
  if (!bind->mw) {  // a registration on the connection's own PD: usable now
    a.notify.rkey = bind->rkey;
    a.ready = true;
    return Front::send;
  }
  // Exactly the segment's bytes in the slot, over the slot's own region (registrations.hpp); past
  // a last segment's end its slot holds zeros (SegmentCache::filled).
  ibv_mr* region = catalog_->device->arena_slots.at(slot).get();
  ibv_send_wr wr{};
  wr.wr_id = rdma::WorkId{owner_, rdma::work_kind(VodWork::slot_bind), slot}.pack();
  wr.opcode = IBV_WR_BIND_MW;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.bind_mw.mw = bind->mw;
  wr.bind_mw.rkey = bind->rkey;
  wr.bind_mw.bind_info.mr = region;
  wr.bind_mw.bind_info.addr = reinterpret_cast<std::uint64_t>(region->addr);
  wr.bind_mw.bind_info.length = a.file->segment_length(a.notify.segment);
  wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(qp_, &wr, &bad)) {
    windows_->bind_done(slot, false, now);
    give_up("ibv_post_send of a window bind over cache slot " + std::to_string(slot) + " failed: " + std::strerror(err));
    return Front::wait;
  }
  ++stats_.slot_binds;
  ++outstanding_;
  binding_ = true;
  return Front::wait;
}

void SegmentChannel::post_sends() {
  lease_wait_.cancel();
  while (!closed_ && !queued_.empty() && !free_sends_.empty()) {
    const Front front = ready_front();
    if (front == Front::wait) return;
    if (front == Front::again) continue;
    const std::uint32_t slot = free_sends_.back();
    const auto bytes = proto::encode(queued_.front().notify);
    std::uint8_t* at = buffers_.data() + (recv_depth(credits_) + slot) * kSlot;
    std::memcpy(at, bytes.data(), bytes.size());
    const bool refuse = fail_posts_every_ && ++posts_ % fail_posts_every_ == 0;  // the test hook
    if (int err = refuse ? ENOMEM
                         : rdma::post_send(qp_, rdma::WorkId{owner_, rdma::work_kind(VodWork::send), slot}.pack(), at,
                                           static_cast<std::uint32_t>(bytes.size()), mr_->lkey)) {
      give_up(std::string("ibv_post_send of a segment notification failed: ") + std::strerror(err));
      return;
    }
    ++outstanding_;
    free_sends_.pop_back();
    queued_.pop_front();
    if (unanswered_ > 0) --unanswered_;  // before the client can see it: its next request may come at once
    ++stats_.notifications;
  }
}

}  // namespace vod::server::ondemand
