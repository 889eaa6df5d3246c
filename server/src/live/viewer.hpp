// SPDX-License-Identifier: LGPL-2.1-or-later
// One live viewer's connection on the server: its QP on the live module's shared CQ, the credit
// messages it receives and the notifications it sends, as an explicit state machine.
//
//   [binding --binds complete-->] awaiting_credit --credit--> joining --a keyframe is in the ring--> streaming
//          \                        \                                   |
//           `------------------------`--- disconnect, error, stop ---> draining --all WRs flushed--> (destroyed)
//
//   binding          with memory windows only: the viewer's own QP is in RTS and the binds of its
//                    windows (ring, header, catalog) are posted, by a windows::WindowBinding (the
//                    VoD connections' state machine); the accept waits for them (take_bound()).
//                    Without windows a viewer starts in awaiting_credit.
//   awaiting_credit  accepted, receives posted; nothing may be sent before the first credit message
//                    (the client sends first, as iWARP requires).
//   joining          credit granted, but the ring holds no keyframe yet: the viewer starts at the
//                    newest keyframe, so its first bytes decode at once.
//   streaming        one notification per record while credits and send-queue room last; with
//                    fewer credits than pending records, everything pending goes out as one
//                    coalesced notification (latest wins). The server never waits for a viewer.
//                    What to send is decided by plan_notifications (notify_planner.hpp); the
//                    viewer only posts it.
//   draining         the QP is moved to the error state (cm::QpDrain): once every send, receive
//                    and bind it counts has completed as a flush, nothing of the QP is left in the
//                    CQ, and the viewer is destroyed.
//
// Work requests are tagged (rdma::WorkId) with a Work kind: send with the send's sequence number,
// recv with the receive slot, bind for the last window bind. Sends are signaled every
// `signal_every`th and the last of each pump, and one signaled completion retires every send
// before it: so the count of sends outstanding is exact, and a drain needs no marker.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "cm/draining.hpp"
#include "host_buffer.hpp"
#include "live/channel.hpp"
#include "live/channel_view.hpp"
#include "live/notify_planner.hpp"
#include "vod/protocol/live_messages.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/cq_share.hpp"
#include "vod/rdma/device.hpp"
#include "vod/rdma/handles.hpp"
#include "windows/connection_pd.hpp"
#include "windows/rdma_window_verbs.hpp"
#include "windows/window_binding.hpp"

namespace vod::server::live {

struct ViewerStats {
  std::uint64_t notifications = 0, coalesced = 0, credits_granted = 0, bad_messages = 0;
};

class Viewer {
 public:
  enum class State { binding, awaiting_credit, joining, streaming, draining };
  // The kinds of its work requests' ids.
  enum class Work : std::uint8_t { send = 1, recv = 2, bind = windows::kBindKind /* the last memory window bind */ };

  // With memory windows: the regions to bind windows over on the viewer's own QP, before the accept.
  struct WindowPlan {
    std::vector<windows::WindowSpan> spans;
    windows::RkeyHistory* rkeys = nullptr;
    std::uint8_t responder_resources = 1;
    std::uint8_t rnr_retry = 7;
  };

  // With a PD per connection (--isolation pd): the memory the viewer's own PD registers (ring,
  // header, catalog), its QP and message buffers on that PD too.
  struct OwnPdPlan {
    windows::PinnedBudget* budget = nullptr;
    std::vector<windows::ConnectionPd::Span> spans;
  };

  struct Depths {
    std::uint32_t send = 64;  // notifications in flight at most (capped by max_qp_wr)
    std::uint32_t recv = 8;   // credit messages the server has receives posted for
    std::uint32_t signal_every = 16;
  };

  // Creates the QP on `hub`'s CQ for the id's device, registers the message buffers and posts the
  // receives: call before rdma_accept. With `windows`, the QP is the viewer's own, brought to RTS,
  // and the windows' binds are posted (state binding). Throws RdmaError.
  // With `own`, `pd` is unused: the viewer's own PD holds everything of it. Throws
  // cm::SetupRefused when that PD's registrations cannot be had (windows/connection_pd.hpp).
  Viewer(rdma_cm_id* id, ibv_pd* pd, const rdma::DeviceLimits& limits, rdma::CompletionHub& hub, Depths depths, std::string peer,
         std::string channel, const WindowPlan* windows = nullptr, const OwnPdPlan* own = nullptr);
  Viewer(const Viewer&) = delete;
  Viewer& operator=(const Viewer&) = delete;
  ~Viewer();

  // A completion of this viewer's work. Returns true when the viewer can send more (credit came).
  bool on_completion(const ibv_wc& wc, rdma::WorkId id);
  // Sends what `view` has published beyond what this viewer was told, as credits allow.
  void pump(const ChannelView& view);
  // No more posts; outstanding work completes as flushes (the CM moves the QP to error).
  void begin_drain(const std::string& why);

  State state() const noexcept { return state_; }
  // With windows: the regions with their windows' rkeys, in the plan's order; with its own PD, the
  // regions registered there, in the plan's order.
  const std::vector<proto::RegionDescriptor>& window_regions() const noexcept { return window_regions_; }
  // True once, when the binds have completed: the accept may go out now.
  bool take_bound() noexcept { return std::exchange(bound_, false); }
  ibv_qp* qp() const noexcept { return own_qp_ ? own_qp_.get() : qp_.get(); }
  // Every send, receive and bind it posted has completed: nothing of this QP is left to arrive in
  // the shared CQ.
  bool drained() const noexcept { return state_ == State::draining && drain_.drained(outstanding()); }
  std::uint64_t outstanding() const noexcept {
    return (sends_posted_ - sends_done_) + recvs_posted_ + (binding_ && binding_->bind_outstanding() ? 1 : 0);
  }
  bool failed() const noexcept { return !failure_.empty(); }  // a bad message or a failed send: disconnect it
  const std::string& failure() const noexcept { return failure_; }
  const std::string& peer() const noexcept { return peer_; }
  const std::string& channel() const noexcept { return channel_; }
  const ViewerStats& stats() const noexcept { return stats_; }
  std::uint32_t credits() const noexcept { return credits_; }
  cm::QpDrain::Clock::time_point drain_began() const noexcept { return drain_.began(); }
  // True once after a completion gave this viewer credit or queue room: the loop pumps it then.
  bool take_wants_pump() noexcept { return std::exchange(wants_pump_, false); }

 private:
  void post_recv(std::uint32_t slot);
  // `last`: the last of this pump (signaled, so that no send is left uncovered). False: the post
  // failed, and the viewer with it.
  bool send(const proto::LiveNotify& n, bool last);
  void fail(const std::string& why);

  rdma_cm_id* id_;
  rdma::CompletionHub& hub_;
  Depths depths_;
  std::string peer_, channel_;
  std::uint32_t owner_ = 0;
  // Declared in creation order; destroyed in reverse: QP, CQ share, MR, buffer, and last its own PD.
  std::optional<windows::ConnectionPd> own_pd_;
  HostBuffer buffers_;  // send slots, then receive slots; local access only
  rdma::MemoryRegion mr_;
  rdma::CqShare cq_share_;
  rdma::QueuePair qp_;           // without windows
  rdma::VerbsQueuePair own_qp_;  // with windows
  // With windows: the same state machine as a VoD connection's (bring-up, binds, the signalled
  // bind's completion, invalidation). After the QPs: the windows go first.
  std::optional<windows::RdmaWindowVerbs> window_verbs_;
  std::optional<windows::WindowBinding> binding_;
  std::vector<proto::RegionDescriptor> window_regions_;
  bool bound_ = false;
  bool inline_sends_ = false;
  bool wants_pump_ = false;

  State state_ = State::awaiting_credit;
  std::uint32_t credits_ = 0;
  NotifyCursor cursor_;  // its phase follows state_ (joining or streaming)
  std::uint64_t sends_posted_ = 0, sends_done_ = 0, last_signaled_ = 0;
  std::uint64_t recvs_posted_ = 0;
  std::uint64_t acked_seq_ = 0;
  std::string failure_;
  cm::QpDrain drain_;
  ViewerStats stats_;
};

const char* to_string(Viewer::State s) noexcept;

}  // namespace vod::server::live
