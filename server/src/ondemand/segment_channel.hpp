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
//
// What one connection can make the server hold is bounded: a request beyond its `credits`
// unanswered ones is a protocol violation (counted, and the connection is cut off with the reason);
// a segment it asks for again while its first request is unanswered shares that request's one
// cache waiter; and its grace protects only its fair share of the cache's slots (it is one
// cache::Requester).
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cache/segment_cache.hpp"
#include "host_buffer.hpp"
#include "loop/reactor.hpp"
#include "registrations.hpp"
#include "vod/protocol/segment_table.hpp"
#include "vod/rdma/handles.hpp"
#include "windows/slot_windows.hpp"
#include "windows/window_binding.hpp"

namespace vod::server::ondemand {

struct ChannelStats {
  std::uint64_t requests = 0, notifications = 0, bad_messages = 0, refused = 0, slot_binds = 0;
  std::uint64_t credit_violations = 0;  // connections cut off for a request beyond their credits
  std::uint64_t coalesced = 0;          // requests for a segment the connection already waited for
  std::uint64_t busy = 0;               // answered busy: a slot's registration would pass --isolation-memory
};

// With memory windows: what the connection may read of the arena, and where its windows are kept.
struct SlotAccess {
  windows::SlotWatchers& watchers;
  std::uint32_t movie_index = 0;  // the one catalog entry its grant covers (kNoMovie: none)
  std::size_t max_windows = 256;
  bool own_pd = false;  // --isolation pd: slots are registered on the connection's own PD (the channel's `pd`), not bound
  windows::PinnedBudget* budget = nullptr;  // own_pd: what those registrations count against (--isolation-memory)
};

// The kinds of a VoD connection's work request ids (rdma::WorkId::kind), one enum for its hub owner:
// the binds of its connection windows (windows::WindowBinding), and its segment channel's receives,
// notification sends and slot window binds.
enum class VodWork : std::uint8_t { bind = windows::kBindKind, recv = 5, send = 6, slot_bind = 7 };

class SegmentChannel {
 public:
  static constexpr std::uint16_t kMaxAhead = 8;  // read-ahead granted per request, whatever is asked

  // Registers its buffers on `pd` and posts the receives on `qp` (in INIT or later, before the
  // accept). Throws RdmaError. `fatal` is called from the reactor (never from inside one of this
  // channel's calls) when the connection must go: a notification or bind that could not be posted,
  // whose answers the client would otherwise wait for in vain.
  SegmentChannel(cache::SegmentCache& cache, std::shared_ptr<CatalogRegistration> catalog, ibv_pd* pd, ibv_qp* qp, std::uint32_t owner,
                 std::string peer, ChannelStats& stats, loop::Reactor& reactor, std::function<void(const std::string& why)> fatal,
                 std::optional<SlotAccess> access = std::nullopt);
  ~SegmentChannel();
  SegmentChannel(const SegmentChannel&) = delete;
  SegmentChannel& operator=(const SegmentChannel&) = delete;

  // Work requests the QP needs room for (the notifications and one window bind), and the CQ
  // entries they may complete.
  static std::uint32_t send_depth(std::uint16_t credits) noexcept { return 2u * credits + 1; }
  static std::uint32_t recv_depth(std::uint16_t credits) noexcept { return credits; }

  // A completion of kind recv, send or slot_bind. Returns a reason to cut the connection off (a
  // failed receive, send or bind that is not a flush), or an empty string.
  std::string on_completion(const ibv_wc& wc, VodWork kind, std::uint32_t index);
  // The connection is going: answers that arrive later are dropped, and its slot windows are freed.
  void close() noexcept;
  // Work requests posted on the QP whose completions have not arrived yet. Every completion of
  // this channel's kinds, flushes included, is passed to on_completion (closed or not), so once
  // the QP is in the error state this reaches 0 exactly when all of them have been flushed: the
  // drain needs no marker Send, which siw never completes on a QP in the error state.
  std::uint32_t outstanding() const noexcept { return outstanding_; }

  // A test hook (vod-server --test-fail-notifications N): every Nth notification post of the
  // process is refused as a full send queue refuses it (ENOMEM, before the device sees it), so
  // tests reach the path that cuts a connection off instead of dropping its answers. 0: off.
  static void fail_posts_every(unsigned n) noexcept { fail_posts_every_ = n; }

  // The notification that answers `asked` with the cache's verdict: the entry (and, without
  // windows, the arena's rkey) only when the segment is resident, and never the entry of an
  // earlier answer that was asked again (which the client could not decode).
  static proto::SegmentNotify settle(proto::SegmentNotify asked, proto::SegmentStatus status, const proto::SegmentEntry& entry,
                                     std::optional<std::uint32_t> arena_rkey) noexcept {
    asked.status = status;
    asked.entry = 0;
    asked.rkey = 0;
    if (status == proto::SegmentStatus::ok) {
      asked.entry = proto::pack(entry);
      if (arena_rkey) asked.rkey = *arena_rkey;
    }
    return asked;
  }

 private:
  struct Answer {
    proto::SegmentNotify notify;
    std::shared_ptr<cache::CachedFile> file;  // ok answers: the segment's movie, checked again before it goes
    bool ready = false;                       // ok answers with windows: the rkey is its window's
  };
  void post_recv(std::uint32_t slot);
  void handle(const proto::SegmentRequest& r);
  void ask_cache(std::shared_ptr<cache::CachedFile> file, proto::SegmentNotify n, std::uint16_t ahead);
  // The cache's verdict on `n`'s segment: answers it, and every request for that segment that
  // was coalesced into it.
  void resolved(const proto::SegmentNotify& n, proto::SegmentStatus status, const proto::SegmentEntry& entry,
                std::shared_ptr<cache::CachedFile> file);
  static std::uint64_t segment_key(std::uint32_t movie_index, std::uint32_t segment) noexcept {
    return std::uint64_t{movie_index} << 32 | segment;
  }
  void answer(Answer a);
  // Sends the queued answers in order while send buffers are free; with windows, binds a window
  // for the front one first when it has none.
  void post_sends();
  // Whether the front answer can go: with windows an ok one needs its window's rkey first, and
  // waits for a bind or a lease; one whose segment left its slot is asked for again and leaves
  // the queue (again: look at the new front).
  enum class Front { send, wait, again };
  Front ready_front();
  // Answers that cannot go out: nothing more is sent, and the owner is told (deferred) to cut the
  // connection off with `why`, so the client hears of it instead of waiting for its answers.
  void give_up(std::string why);

  static inline unsigned fail_posts_every_ = 0;  // the test hook's setting, and posts counted for it
  static inline unsigned posts_ = 0;

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
  std::deque<Answer> queued_;     // answers waiting for a free send buffer (or their window)
  std::uint32_t unanswered_ = 0;  // requests received and not yet answered (posted): at most credits_
  // Segments this connection waits for (one cache waiter each), with the ids of the requests
  // repeated meanwhile.
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> asked_;
  std::optional<SlotAccess> access_;
  std::optional<windows::SlotWindows> windows_;  // with access_
  bool binding_ = false;                         // the front answer's window bind is posted
  loop::Reactor& reactor_;
  std::function<void(const std::string&)> fatal_;
  loop::Reactor::Timer lease_wait_;        // max_windows held: until the first lease ends
  loop::Reactor::Timer give_up_;           // fatal_, called from the reactor
  std::shared_ptr<SegmentChannel*> self_;  // answers hold it weakly: null once closed
  bool closed_ = false;
  std::uint32_t outstanding_ = 0;  // posted work requests not completed yet
};

}  // namespace vod::server::ondemand
