// SPDX-License-Identifier: LGPL-2.1-or-later
// The SegmentReader's request channel: SegmentRequest Sends (at most `credits` unanswered, as the
// server's table says; one until it does) and the receives their notifications land in. Requests
// wait in order for a credit and a send buffer; each answer is matched with the request it names
// and handed back with it. `Movie` is the reader's per-movie state, carried by each request.
//
// Work requests are tagged with the fetcher's owner and FetchWork recv (index: the receive slot) or
// send (index: the send buffer).
#pragma once

#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "vod/protocol/segment_table.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/device.hpp"
#include "vod/rdma/error.hpp"
#include "vod/rdma/post.hpp"

namespace vod::client {

// The channel's message buffers, whatever its Movie.
struct SegmentMessages {
  // Receives a client posts for notifications: it never has more requests unanswered.
  static constexpr std::uint16_t kMaxCredits = 4;
  static constexpr std::size_t kRecvSlot = proto::kSegmentMessageMax;
  static constexpr std::size_t kSendSlot = 32;
  static constexpr std::size_t kMemory = kMaxCredits * (kRecvSlot + kSendSlot);  // receives, then sends
};

template <class Movie>
class SegmentRequests : public SegmentMessages {
 public:
  struct Request {
    std::shared_ptr<Movie> movie;
    std::uint32_t segment = 0;
    std::uint16_t ahead = 0;
    std::chrono::steady_clock::time_point sent{};
  };
  struct Answer {
    proto::SegmentNotify notify;
    Request request;
  };

  // `recv_kind`, `send_kind`: the owner's FetchWork kinds. `sent` counts the requests sent;
  // `failure` learns why a Send could not be posted (the connection is lost then).
  SegmentRequests(rdma::ClientEndpoint& ep, std::uint32_t owner, std::uint8_t recv_kind, std::uint8_t send_kind, std::uint64_t& sent,
                  std::string& failure)
      : ep_(ep), owner_(owner), recv_kind_(recv_kind), send_kind_(send_kind), sent_(sent), failure_(failure) {
    for (std::uint32_t i = 0; i < kMaxCredits; ++i) free_sends_.push_back(i);
  }

  // The message buffers (kMemory bytes of `mr`); the receives are posted once. Throws RdmaError.
  void start(std::uint8_t* memory, ibv_mr* mr) {
    if (started()) return;
    memory_ = memory;
    mr_ = mr;
    for (std::uint32_t i = 0; i < kMaxCredits; ++i) post_recv(i);
  }
  bool started() const noexcept { return memory_ != nullptr; }
  void set_credits(std::uint16_t credits) noexcept { credits_ = std::min(kMaxCredits, credits); }

  void enqueue(Request r) {
    unsent_.push_back(std::move(r));
    send();
  }
  // A send buffer is free again (its Send completed).
  void on_sent(std::uint32_t buffer) {
    free_sends_.push_back(buffer);
    send();
  }
  // The notification in receive `index`, with the request it answers; or why it cannot be used
  // (the connection is lost then). The receive is posted again first.
  std::variant<Answer, std::string> on_received(std::uint32_t index) {
    std::uint8_t message[kRecvSlot];
    std::memcpy(message, memory_ + index * kRecvSlot, kRecvSlot);
    post_recv(index);
    auto n = proto::decode_segment_notify(message);
    if (!n) return "the server sent a segment notification that does not decode: " + n.error().message;
    auto node = unanswered_.extract(n->request_id);
    if (node.empty()) return "the server answered a segment request it was never sent (id " + std::to_string(n->request_id) + ")";
    return Answer{*n, std::move(node.mapped())};
  }
  // Sends what credits and send buffers allow, in order.
  void send() {
    while (!unsent_.empty() && unanswered_.size() < credits_ && !free_sends_.empty()) {
      Request r = std::move(unsent_.front());
      unsent_.pop_front();
      const std::uint32_t id = next_request_++;
      const std::uint32_t buffer = free_sends_.back();
      const auto bytes = proto::encode(proto::SegmentRequest{r.movie->index, r.segment, r.ahead, id});
      std::uint8_t* at = memory_ + kMaxCredits * kRecvSlot + buffer * kSendSlot;
      std::memcpy(at, bytes.data(), bytes.size());
      if (int err = rdma::post_send(ep_.qp.get(), rdma::WorkId{owner_, send_kind_, buffer}.pack(), at,
                                    static_cast<std::uint32_t>(bytes.size()), mr_->lkey)) {
        // Its parts would wait for ever: the connection is lost instead (RdmaFetcher::poll throws).
        unsent_.push_front(std::move(r));
        if (failure_.empty()) failure_ = std::string("ibv_post_send of a segment request failed: ") + std::strerror(err);
        return;
      }
      free_sends_.pop_back();
      r.sent = std::chrono::steady_clock::now();
      unanswered_.emplace(id, std::move(r));
      ++sent_;
    }
  }
  std::string state() const {
    return std::to_string(unanswered_.size()) + " requests unanswered, " + std::to_string(unsent_.size()) + " unsent (credits " +
           std::to_string(credits_) + ", " + std::to_string(free_sends_.size()) + " send buffers free)";
  }

 private:
  void post_recv(std::uint32_t index) {
    if (int err = rdma::post_recv(ep_.qp.get(), rdma::WorkId{owner_, recv_kind_, index}.pack(), memory_ + index * kRecvSlot,
                                  static_cast<std::uint32_t>(kRecvSlot), mr_->lkey))
      rdma::throw_error("ibv_post_recv", err, rdma::device_name(ep_.id->verbs), "posting a receive for segment notifications");
  }

  rdma::ClientEndpoint& ep_;
  std::uint32_t owner_;
  std::uint8_t recv_kind_, send_kind_;
  std::uint64_t& sent_;
  std::string& failure_;
  std::uint8_t* memory_ = nullptr;  // the reader's: pinned by the endpoint until its QP is gone
  ibv_mr* mr_ = nullptr;
  std::deque<Request> unsent_;
  std::unordered_map<std::uint32_t, Request> unanswered_;  // by request id
  std::uint32_t next_request_ = 1;
  std::uint16_t credits_ = 1;  // until a table says: one request at a time
  std::vector<std::uint32_t> free_sends_;
};

}  // namespace vod::client
