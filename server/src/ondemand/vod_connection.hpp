// SPDX-License-Identifier: LGPL-2.1-or-later
// One VoD or catalog client: everything it holds, owned here and released in reverse order of its
// making, and its life as the state machine of vod_connection_state.hpp (every transition goes
// through next(); this class only carries the actions out).
//
// Without memory windows it is accepted at once (state accepting, an rdma_cm QP on the hub's CQ
// that nothing is ever posted to). With windows it starts binding: its own QP brought to RTS and the
// binds posted (windows::WindowBinding); the accept goes out when the signalled bind completes, the
// completion delivered to its hub owner id (WorkId kind VodWork::bind). A connection that
// cannot be set up is rejected (internal_error) and its transport drains its QP before destroying
// it (VodTransport::fail).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "admission.hpp"
#include "auth/grant.hpp"
#include "cm/cm_endpoint.hpp"
#include "cm/draining.hpp"
#include "cm/routes.hpp"
#include "cm/transport.hpp"
#include "loop/reactor.hpp"
#include "ondemand/counted.hpp"
#include "ondemand/segment_channel.hpp"
#include "ondemand/vod_connection_state.hpp"
#include "registrations.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/cq_share.hpp"
#include "vod/rdma/handles.hpp"
#include "windows/connection_pd.hpp"
#include "windows/rdma_window_verbs.hpp"
#include "windows/window_binding.hpp"

namespace vod::server::ondemand {

class VodTransport;

class VodConnection final : public cm::CmEndpoint {
 public:
  VodConnection(VodTransport& transport, std::shared_ptr<CatalogRegistration> catalog, const Admit& admit, std::string peer);
  VodConnection(const VodConnection&) = delete;
  VodConnection& operator=(const VodConnection&) = delete;

  // What building a connection needs of its transport.
  struct Setup {
    rdma::CompletionHub& hub;
    cm::Routes& routes;
    loop::Reactor& reactor;
    cache::SegmentCache* cache;            // with --cache-size: a SegmentChannel
    windows::SlotWatchers* slot_watchers;  // with a cache: who holds windows over which slot
    windows::PinnedBudget* pinned;         // --isolation pd
    ChannelStats& channel_stats;
    std::size_t& binding;  // connections binding windows now (Counted)
    std::size_t max_slot_windows;
  };
  // Builds everything it holds for `a` (vod_connection_setup.cpp): a QP on the hub's CQ, its own
  // PD or its windows, a segment channel; then takes `a`'s id and grant and gets a route. Accepted
  // at once (state accepting), or binding its windows (the accept goes out once they are bound).
  // Throws (cm::SetupRefused, RdmaError, ...) before it takes the id: then the caller still owns
  // the id and rejects it, and this connection goes with the caller's frame.
  void set_up(cm::Accepting& a, const Setup& s);
  // Gives back at once what it holds (grant, expiry, binding slot, route, segment channel, PD,
  // windows) and moves its QP to the error state (cm::QpDrain). True when that QP may still
  // complete work: it must drain before it is destroyed (cm::DrainingConnections).
  bool retire();

  void on_cm_event(rdma::CmEvent& event) override;
  // A completion of its QP's work (delivered by the hub to its owner id).
  void on_completion(const ibv_wc& wc, rdma::WorkId wid);
  // Cut off now (a revocation, its token's expiry, the drain's end): not yet accepted, it is
  // rejected; accepted, its windows are invalidated, its QP moved to error and the disconnect sent.
  // `this` may be gone on return.
  void cut_off(const std::string& why);

  State state() const noexcept { return state_; }
  const std::string& peer() const noexcept { return peer_; }
  const std::string& what() const noexcept { return what_; }
  const std::string& kind() const noexcept { return kind_; }
  const std::string& movie() const noexcept { return movie_; }
  const auth::Grant& grant() const noexcept { return grant_; }
  rdma_cm_id* id() const noexcept { return id_.get(); }
  std::uint8_t depth() const noexcept { return depth_; }
  // Failed: every work request it counts has completed since its QP went to error (cm::QpDrain).
  bool drained() const noexcept { return drain_.drained(outstanding()); }
  cm::QpDrain::Clock::time_point drain_began() const noexcept { return drain_.began(); }

 private:
  // Its QP: its own (windows) or rdma_cm's.
  ibv_qp* qp() const noexcept { return own_qp_ ? own_qp_.get() : qp_.get(); }
  // Runs next(state_, e) and its action; `why` is for a reject. `this` may be gone on return.
  void handle(Event e, const std::string& why = {});
  void send_accept();
  // set_up's two ways: rdma_cm's QP (no windows, maybe its own PD), accepted now; or its own QP
  // with windows, binding.
  void set_up_shared_qp(const cm::Accepting& a, const Setup& s, proto::AcceptData& accept);
  void set_up_windows(const cm::Accepting& a, const Setup& s, proto::AcceptData& accept);
  void disconnect() noexcept;

  VodTransport& transport_;
  // Declared in creation order, so destroyed in reverse: the timer and the grant first, the
  // windows before their QP, the QP before its share of the CQ, the route before the id, the id
  // before the catalog generation whose regions it was given.
  std::shared_ptr<CatalogRegistration> catalog_;
  rdma::CmIdHandle id_;
  cm::Routes::Route route_;
  std::optional<windows::ConnectionPd> own_pd_;    // --isolation pd: its PD and its own registrations, after its QP
  rdma::CqShare cq_;                               // with windows: room for its binds
  rdma::QueuePair qp_;                             // without windows: rdma_cm's
  rdma::VerbsQueuePair own_qp_;                    // with windows: its own
  std::optional<windows::RdmaWindowVerbs> verbs_;  // own_qp_'s
  std::optional<windows::WindowBinding> windows_;
  rdma::HubOwner hub_owner_;               // with windows or a segment cache: where its completions go
  std::optional<SegmentChannel> channel_;  // with a segment cache: its requests and notifications
  Counted binding_;                        // while binding: one of VodTransport::kMaxBinding
  auth::Grant grant_;                      // its address's count, its token: given back however it ends
  loop::Reactor::Timer expiry_;            // at the grant's deadline: cut off

  State state_ = State::accepting;
  std::string peer_, what_, kind_, movie_;
  std::chrono::steady_clock::time_point since_;
  std::uint8_t depth_ = 0;
  std::vector<std::uint8_t> accept_data_;  // while binding: the accept to send
  // Its work requests not completed yet: the segment channel's, and the chain of window binds.
  std::uint64_t outstanding() const noexcept {
    return (channel_ ? channel_->outstanding() : 0) + (windows_ && windows_->bind_outstanding() ? 1 : 0);
  }
  cm::QpDrain drain_;  // failed: its QP in the error state, destroyed once outstanding() is 0
};

}  // namespace vod::server::ondemand
