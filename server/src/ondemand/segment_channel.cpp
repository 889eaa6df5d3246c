// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ondemand/segment_channel.hpp"

#include <algorithm>
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
                               std::uint32_t owner, std::string peer, ChannelStats& stats)
    : cache_(cache),
      catalog_(std::move(catalog)),
      qp_(qp),
      owner_(owner),
      peer_(std::move(peer)),
      stats_(stats),
      credits_(cache.options().request_credits),
      buffers_((recv_depth(credits_) + send_depth(credits_)) * kSlot),
      self_(std::make_shared<SegmentChannel*>(this)) {
  mr_ = rdma::register_memory(pd, buffers_.data(), buffers_.mapped_length(), IBV_ACCESS_LOCAL_WRITE, "segment message buffers for " + peer_);
  for (std::uint32_t i = 0; i < send_depth(credits_); ++i) free_sends_.push_back(send_depth(credits_) - 1 - i);
  for (std::uint32_t i = 0; i < recv_depth(credits_); ++i) post_recv(i);
}

SegmentChannel::~SegmentChannel() { close(); }

void SegmentChannel::close() noexcept {
  closed_ = true;
  *self_ = nullptr;
  queued_.clear();
}

void SegmentChannel::post_recv(std::uint32_t slot) {
  if (int err = rdma::post_recv(qp_, rdma::WorkId{owner_, kRecv, slot}.pack(), buffers_.data() + slot * kSlot, static_cast<std::uint32_t>(kSlot), mr_->lkey))
    rdma::throw_error("ibv_post_recv", err, peer_, "posting a receive for segment requests");
}

std::string SegmentChannel::on_completion(const ibv_wc& wc, std::uint8_t kind, std::uint32_t index) {
  if (closed_) return {};
  if (kind == kSend) {
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
    return answer(n);
  }
  std::weak_ptr<SegmentChannel*> weak = self_;
  cache_.request(movies[r.movie_index]->movie->cached, r.segment, std::min(r.ahead, kMaxAhead),
                 [weak, n](proto::SegmentStatus status, const proto::SegmentEntry& entry) mutable {
                   auto self = weak.lock();
                   if (!self || !*self) return;  // the connection went meanwhile
                   n.status = status;
                   if (status == proto::SegmentStatus::ok) {
                     n.entry = proto::pack(entry);
                     n.rkey = (*self)->catalog_->device->arena->rkey;
                   }
                   (*self)->answer(n);
                 });
}

void SegmentChannel::answer(const proto::SegmentNotify& n) {
  if (closed_) return;
  // A client keeps at most `credits` requests unanswered; a hostile one that sends more gets its
  // answers as send buffers free up, and never more queued than one per receive posted since.
  if (queued_.size() >= 4u * credits_) return;
  queued_.push_back(n);
  post_sends();
}

void SegmentChannel::post_sends() {
  while (!queued_.empty() && !free_sends_.empty()) {
    const std::uint32_t slot = free_sends_.back();
    const auto bytes = proto::encode(queued_.front());
    std::uint8_t* at = buffers_.data() + (recv_depth(credits_) + slot) * kSlot;
    std::memcpy(at, bytes.data(), bytes.size());
    if (int err = rdma::post_send(qp_, rdma::WorkId{owner_, kSend, slot}.pack(), at, static_cast<std::uint32_t>(bytes.size()), mr_->lkey)) {
      log::warn("cache", peer_ + ": ibv_post_send of a segment notification failed: " + std::strerror(err));
      queued_.clear();
      return;
    }
    free_sends_.pop_back();
    queued_.pop_front();
    ++stats_.notifications;
  }
}

}  // namespace vod::server::ondemand
