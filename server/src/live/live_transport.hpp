// SPDX-License-Identifier: LGPL-2.1-or-later
// The live transport (cm::Transport): live viewers over rdma_cm. Each is a Connection, the
// cm::CmEndpoint of its id, holding its route, its grant, its token's timer and its Viewer (QP,
// buffers, windows, the send state machine). Its viewers' QPs use the server's one CompletionHub
// (loop::CompletionSource): after each poll, on_polled() serves the viewers a completion gave
// credit or room, and accepts or refuses those whose window binds completed. When a channel has new
// records (Channels::on_records), its viewers are pumped. A viewer that disconnects is retired: its
// grant and route go at once, its QP drains, and it is destroyed once every work request flushed
// (reaped every 100 ms while any drain). The VoD path never touches any of it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/grant.hpp"
#include "cm/cm_endpoint.hpp"
#include "cm/draining.hpp"
#include "cm/routes.hpp"
#include "cm/transport.hpp"
#include "live/channels.hpp"
#include "live/viewer.hpp"
#include "loop/completion_source.hpp"
#include "loop/reactor.hpp"
#include "metrics/server_metrics.hpp"
#include "registrations.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/handles.hpp"

namespace vod::server::live {

class LiveTransport final : public cm::Transport {
 public:
  struct Context {
    loop::Reactor& reactor;
    loop::CompletionSource& completions;
    cm::Routes& routes;
    ServerMetrics& metrics;
    std::function<std::size_t()> clients;     // every transport's connections, for log lines
    windows::PinnedBudget* pinned = nullptr;  // --isolation pd: what viewers' own registrations may pin
  };
  LiveTransport(Context context, Channels& channels, Viewer::Depths depths = {});
  ~LiveTransport() override;
  LiveTransport(const LiveTransport&) = delete;
  LiveTransport& operator=(const LiveTransport&) = delete;

  // Destroys the retired viewers whose work requests have flushed (force: all of them, at exit).
  void reap(bool force = false) { draining_.reap(force); }
  std::size_t draining() const noexcept { return draining_.size(); }

  // Accepts a viewer of a live channel (a.admit.entry) on a.id: creates its QP on the shared CQ,
  // posts its receives and answers with the ring and header. Throws on failure (the caller rejects
  // with internal error; the id stays the caller's then). The viewer's connection owns the grant
  // from here: a failed bind or accept gives it back with the viewer, as a disconnect does. When
  // its token expires (the grant's deadline), it is cut off.
  void accept(cm::Accepting a) override;
  std::size_t connections() const noexcept override { return viewers_.size(); }
  void cut_off_if(const std::function<std::optional<std::string>(const auth::Grant&)>& why) override;
  // A live stream never ends by itself: the drain disconnects its viewers at once.
  void begin_drain() override;
  void cut_off_all() override { disconnect_all(); }
  void count(ServerMetrics::ConnectionCounts& counts) const override;

 private:
  // A viewer's connection, the owner of its id's CM events (through its route).
  struct Connection final : cm::CmEndpoint {
    explicit Connection(LiveTransport& s) : service(&s) {}
    void on_cm_event(rdma::CmEvent& event) override { service->on_cm_event(*this, event); }

    LiveTransport* service;
    std::shared_ptr<CatalogRegistration> catalog;  // first: released after the QP and the id
    rdma::CmIdHandle id;
    cm::Routes::Route route{};  // reset when retired: a late event of the id is dropped
    std::unique_ptr<Viewer> viewer;
    std::size_t channel = 0;
    std::chrono::steady_clock::time_point since;
    std::vector<std::uint8_t> accept_data{};  // with windows, while the viewer is binding
    std::uint8_t depth = 0;
    auth::Grant grant{};            // released when the viewer is retired (it drains a while longer)
    loop::Reactor::Timer expiry{};  // at the grant's deadline: cut off; cancelled when retired
    // For DrainingConnections: its viewer drains.
    bool drained() const noexcept { return viewer->drained(); }
    cm::QpDrain::Clock::time_point drain_began() const noexcept { return viewer->drain_began(); }
    const std::string& peer() const noexcept { return viewer->peer(); }
  };
  // A bounded RNR retry: a viewer that grants credit it has no receive for gets its connection
  // failed instead of stalling its send queue forever.
  static constexpr std::uint8_t kRnrRetry = 3;

  void pump_channel(std::size_t channel);
  void service(Connection& c);
  bool finish_accept(Connection& c);  // false: the accept failed (the viewer is draining)
  void retire(std::map<rdma_cm_id*, std::unique_ptr<Connection>>::iterator it, const std::string& why);
  void on_cm_event(Connection& c, rdma::CmEvent& event);
  // Cuts a viewer off now: its windows invalidated, its QP in the error state, the disconnect sent.
  void cut_off(rdma_cm_id* id);
  void disconnect_all();
  void on_polled();
  void expire(rdma_cm_id* id);

  // Declared so that they are destroyed in reverse. (The hub's CQs and the channels outlive this:
  // the server declares them first.)
  Context ctx_;
  loop::Reactor& reactor_;
  loop::CompletionSource& completions_;
  rdma::CompletionHub& hub_;
  Channels& channels_;
  Viewer::Depths depths_;
  std::map<rdma_cm_id*, std::unique_ptr<Connection>> viewers_;
  cm::DrainingConnections<Connection> draining_;  // disconnected; destroyed once their work requests have flushed
};

}  // namespace vod::server::live
