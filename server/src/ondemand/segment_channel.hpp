// SPDX-License-Identifier: LGPL-2.1-or-later
// A VoD or catalog connection's messages on a server with a segment cache: the client's segment
// requests arrive on receives posted before the accept (`credits` of them: the table header tells
// the client how many it may have unanswered), and each is answered with one notification Send
// once the segment is resident, or cannot be. The connection owns it; work requests are tagged with
// the connection's hub owner and kinds kRecv and kSend (the receive's or send buffer's number).
//
// Whatever a client sends, the server answers or ignores it and says why in its log: a message
// that does not decode is counted and dropped (its receive posted again), a movie that is not a
// cached one of the connection's catalog is answered unknown_movie, and read-ahead is capped.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cache/segment_cache.hpp"
#include "host_buffer.hpp"
#include "registrations.hpp"
#include "vod/protocol/segment_table.hpp"
#include "vod/rdma/handles.hpp"

namespace vod::server::ondemand {

struct ChannelStats {
  std::uint64_t requests = 0, notifications = 0, bad_messages = 0;
};

class SegmentChannel {
 public:
  static constexpr std::uint8_t kRecv = 4;
  static constexpr std::uint8_t kSend = 5;
  static constexpr std::uint16_t kMaxAhead = 8;  // read-ahead granted per request, whatever is asked

  // Registers its buffers on `pd` and posts the receives on `qp` (before the accept). Throws RdmaError.
  SegmentChannel(cache::SegmentCache& cache, std::shared_ptr<CatalogRegistration> catalog, ibv_pd* pd, ibv_qp* qp, std::uint32_t owner,
                 std::string peer, ChannelStats& stats);
  ~SegmentChannel();
  SegmentChannel(const SegmentChannel&) = delete;
  SegmentChannel& operator=(const SegmentChannel&) = delete;

  // Work requests the QP needs room for, and the CQ entries they may complete.
  static std::uint32_t send_depth(std::uint16_t credits) noexcept { return 2u * credits; }
  static std::uint32_t recv_depth(std::uint16_t credits) noexcept { return credits; }

  // A completion of kind kRecv or kSend. Returns a reason to cut the connection off (a failed
  // receive or send that is not a flush), or an empty string.
  std::string on_completion(const ibv_wc& wc, std::uint8_t kind, std::uint32_t index);
  // The connection is going: answers that arrive later are dropped.
  void close() noexcept;

 private:
  void post_recv(std::uint32_t slot);
  void handle(const proto::SegmentRequest& r);
  void answer(const proto::SegmentNotify& n);
  void post_sends();

  cache::SegmentCache& cache_;
  std::shared_ptr<CatalogRegistration> catalog_;
  ibv_qp* qp_;
  std::uint32_t owner_;
  std::string peer_;
  ChannelStats& stats_;
  std::uint16_t credits_;
  HostBuffer buffers_;  // receives, then sends, kSegmentMessageMax bytes each
  rdma::MemoryRegion mr_;
  std::vector<std::uint32_t> free_sends_;
  std::deque<proto::SegmentNotify> queued_;  // answers waiting for a free send buffer
  std::shared_ptr<SegmentChannel*> self_;    // answers hold it weakly: null once closed
  bool closed_ = false;
};

}  // namespace vod::server::ondemand
