// SPDX-License-Identifier: LGPL-2.1-or-later
// A VoD or catalog connection's messages on a server with a segment cache: the client's segment
// requests arrive on receives posted before the accept (`credits` of them: the table header tells
// the client how many it may have unanswered), and each is answered with one notification Send
// once the segment is resident, or cannot be. The connection owns it; work requests are tagged with
// the connection's hub owner and kinds kRecv, kSend (the receive's or send buffer's number) and
// kSlotBind (the slot).
//
// With memory windows (tokens), the arena is readable only through windows: a request is answered
// only for the movie the connection's grant covers (others: refused), and an answer carries the
// rkey of a window bound to this connection's QP over exactly the segment's bytes in its slot
// (windows::SlotWindows). Answers go out in order; one whose window is being bound waits for the
// bind's completion, and one whose segment left its slot meanwhile is asked for again.
//
// Whatever a client sends, the server answers or ignores it and says why in its log: a message
// that does not decode is counted and dropped (its receive posted again), a movie that is not a
// cached one of the connection's catalog is answered unknown_movie, and read-ahead is capped.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/segment_cache.hpp"
#include "host_buffer.hpp"
#include "loop/reactor.hpp"
#include "registrations.hpp"
#include "vod/protocol/segment_table.hpp"
#include "vod/rdma/handles.hpp"
#include "windows/slot_windows.hpp"

namespace vod::server::ondemand {

struct ChannelStats {
  std::uint64_t requests = 0, notifications = 0, bad_messages = 0, refused = 0, slot_binds = 0;
};

// With memory windows: what the connection may read of the arena, and where its windows are kept.
struct SlotAccess {
  loop::Reactor& reactor;            // waits for a lease to end when the connection holds max_windows
  windows::SlotWatchers& watchers;
  std::uint32_t movie_index = 0;     // the one catalog entry its grant covers (kNoMovie: none)
  std::size_t max_windows = 256;
  bool own_pd = false;               // --isolation pd: slots are registered on the connection's own PD (the channel's `pd`), not bound
};

class SegmentChannel {
 public:
  static constexpr std::uint8_t kRecv = 5;
  static constexpr std::uint8_t kSend = 6;
  static constexpr std::uint8_t kSlotBind = 7;
  static constexpr std::uint16_t kMaxAhead = 8;  // read-ahead granted per request, whatever is asked

  // Registers its buffers on `pd` and posts the receives on `qp` (in INIT or later, before the
  // accept). Throws RdmaError.
  SegmentChannel(cache::SegmentCache& cache, std::shared_ptr<CatalogRegistration> catalog, ibv_pd* pd, ibv_qp* qp, std::uint32_t owner,
                 std::string peer, ChannelStats& stats, std::optional<SlotAccess> access = std::nullopt);
  ~SegmentChannel();
  SegmentChannel(const SegmentChannel&) = delete;
  SegmentChannel& operator=(const SegmentChannel&) = delete;

  // Work requests the QP needs room for (the notifications and one window bind), and the CQ
  // entries they may complete.
  static std::uint32_t send_depth(std::uint16_t credits) noexcept { return 2u * credits + 1; }
  static std::uint32_t recv_depth(std::uint16_t credits) noexcept { return credits; }

  // A completion of kind kRecv, kSend or kSlotBind. Returns a reason to cut the connection off (a
  // failed receive, send or bind that is not a flush), or an empty string.
  std::string on_completion(const ibv_wc& wc, std::uint8_t kind, std::uint32_t index);
  // The connection is going: answers that arrive later are dropped, and its slot windows are freed.
  void close() noexcept;
  // Work requests posted on the QP whose completions have not arrived yet. Every completion of
  // this channel's kinds, flushes included, is passed to on_completion (closed or not), so once
  // the QP is in the error state this reaches 0 exactly when all of them have been flushed: the
  // drain needs no marker Send, which siw never completes on a QP in the error state.
  std::uint32_t outstanding() const noexcept { return outstanding_; }

 private:
  struct Answer {
    proto::SegmentNotify notify;
    std::shared_ptr<cache::CachedFile> file;  // ok answers: the segment's movie, checked again before it goes
    bool ready = false;                       // ok answers with windows: the rkey is its window's
  };
  void post_recv(std::uint32_t slot);
  void handle(const proto::SegmentRequest& r);
  void ask_cache(std::shared_ptr<cache::CachedFile> file, proto::SegmentNotify n, std::uint16_t ahead);
  void answer(Answer a);
  // Sends the queued answers in order while send buffers are free; with windows, binds a window
  // for the front one first when it has none.
  void post_sends();
  // Whether the front answer can go: with windows an ok one needs its window's rkey first, and
  // waits for a bind or a lease; one whose segment left its slot is asked for again and leaves
  // the queue (again: look at the new front).
  enum class Front { send, wait, again };
  Front ready_front();

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
  std::deque<Answer> queued_;                // answers waiting for a free send buffer (or their window)
  std::optional<SlotAccess> access_;
  std::optional<windows::SlotWindows> windows_;  // with access_
  bool binding_ = false;                     // the front answer's window bind is posted
  loop::Reactor::Timer lease_wait_;          // max_windows held: until the first lease ends
  std::shared_ptr<SegmentChannel*> self_;    // answers hold it weakly: null once closed
  bool closed_ = false;
  std::uint32_t outstanding_ = 0;            // posted work requests not completed yet
};

}  // namespace vod::server::ondemand
