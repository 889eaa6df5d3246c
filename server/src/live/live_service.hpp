// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's live transport: its channels (ring, header, source thread), their registrations on
// every device (REMOTE_READ, exactly the advertised bytes), the catalog entries that describe them,
// and the viewers' connections with their send state machines on one shared CQ.
//
// It is the transport of live viewers (cm::Transport): each is a Connection, the cm::CmEndpoint of
// its id, holding its route, its grant, its token's timer and its Viewer (QP, buffers, windows).
// It runs on the server's event loop (loop::Reactor), where it registers the fd it owns, its
// eventfd (a record was published: on_wake()), and keeps its deadlines as the loop's timers: each
// viewer's token expiry, and the reaping of retired viewers while any are draining. Its viewers'
// QPs use the server's one CompletionHub (loop::CompletionSource): after each poll of it,
// on_polled() serves the viewers that a completion gave credit or room, and accepts or refuses
// those whose window binds completed. The VoD path never touches any of it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "auth/grant.hpp"
#include "cm/cm_endpoint.hpp"
#include "cm/routes.hpp"
#include "cm/transport.hpp"
#include "live/channel.hpp"
#include "live/sources.hpp"
#include "live/viewer.hpp"
#include "metrics/server_metrics.hpp"
#include "loop/completion_source.hpp"
#include "loop/reactor.hpp"
#include "registrations.hpp"
#include "udp/live_multicast.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/completion_hub.hpp"
#include "vod/rdma/handles.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::live {

struct ChannelConfig {
  std::string name;
  SourceSpec source;
};

struct LiveOptions {
  double buffer_seconds = 4;             // ring size, in seconds of the channel's bitrate
  double assumed_bitrate_bps = 8e6;      // for sources whose bitrate is not known before they run
  std::size_t max_record_bytes = 64 * 1024;
  SourceOptions source;
  Viewer::Depths depths;
  std::optional<udp::MulticastOptions> multicast;  // --live-multicast: every record to this group too
};

// Parses NAME=SOURCE (--live); throws std::invalid_argument.
ChannelConfig parse_channel(const std::string& text);

class LiveService final : public cm::Transport {
 public:
  struct Context {
    loop::Reactor& reactor;
    loop::CompletionSource& completions;
    cm::Routes& routes;
    ServerMetrics& metrics;
    std::function<std::size_t()> clients;  // every transport's connections, for log lines
  };
  LiveService(Context context, std::vector<ChannelConfig> channels, LiveOptions options);
  ~LiveService() override;
  LiveService(const LiveService&) = delete;
  LiveService& operator=(const LiveService&) = delete;

  bool empty() const noexcept { return channels_.empty(); }
  bool has(const std::string& name) const noexcept;
  // Starts every source thread.
  void start();

  // Registers every ring and header on `device` (once per device). The device's CQ on the hub must
  // be made before its first viewer (loop::CompletionSource::add_device).
  void register_device(const std::shared_ptr<Device>& device);
  // The channels as catalog entries, with `ctx`'s descriptors (null: lengths only, for UDP
  // clients); appended after the movies.
  std::vector<proto::CatalogEntry> catalog_entries(ibv_context* ctx) const;

  // Destroys the retired viewers whose work requests have flushed (force: all of them, at exit).
  void reap(bool force = false);
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
  struct Regions {
    rdma::MemoryRegion ring, header;
  };
  struct ChannelSlot {
    std::unique_ptr<Channel> channel;
    std::unique_ptr<Source> source;
    ChannelView view;
    std::map<ibv_context*, Regions> regions;  // per device
    std::unique_ptr<udp::MulticastSender> multicast;  // used by the source thread, through the channel's tap
    std::jthread thread;                       // last: stopped and joined first
  };
  // A viewer's connection, the owner of its id's CM events (through its route).
  struct Connection final : cm::CmEndpoint {
    explicit Connection(LiveService& s) : service(&s) {}
    void on_cm_event(rdma::CmEvent& event) override { service->on_cm_event(*this, event); }

    LiveService* service;
    std::shared_ptr<CatalogRegistration> catalog;  // first: released after the QP and the id
    rdma::CmIdHandle id;
    cm::Routes::Route route{};  // reset when retired: a late event of the id is dropped
    std::unique_ptr<Viewer> viewer;
    std::size_t channel = 0;
    std::chrono::steady_clock::time_point since;
    std::vector<std::uint8_t> accept_data{};  // with windows, while the viewer is binding
    std::uint8_t depth = 0;
    auth::Grant grant{};  // released when the viewer is retired (it drains a while longer)
    loop::Reactor::Timer expiry{};  // at the grant's deadline: cut off; cancelled when retired
  };
  // A bounded RNR retry: a viewer that grants credit it has no receive for gets its connection
  // failed instead of stalling its send queue forever.
  static constexpr std::uint8_t kRnrRetry = 3;
  // How often retired viewers are looked at while any drain.
  static constexpr std::chrono::milliseconds kReapEvery{100};

  void attach_multicast(ChannelSlot& slot);
  void pump_channel(std::size_t channel);
  void service(Connection& c);
  bool finish_accept(Connection& c);  // false: the accept failed (the viewer is draining)
  void retire(std::map<rdma_cm_id*, std::unique_ptr<Connection>>::iterator it, const std::string& why);
  void on_cm_event(Connection& c, rdma::CmEvent& event);
  // Cuts a viewer off now: its windows invalidated, its QP in the error state, the disconnect sent.
  void cut_off(rdma_cm_id* id);
  void disconnect_all();
  void on_wake();
  void on_polled();
  void expire(rdma_cm_id* id);

  // Declared so that they are destroyed in reverse: the channels' MRs before the devices' PDs, the
  // fd's registration before the fd. (The hub's CQs outlive this: the server declares it first.)
  Context ctx_;
  loop::Reactor& reactor_;
  loop::CompletionSource& completions_;
  rdma::CompletionHub& hub_;
  LiveOptions options_;
  UniqueFd wake_fd_;  // an eventfd: the source threads' records were published
  loop::Reactor::Registration wake_in_loop_;
  std::vector<std::shared_ptr<Device>> devices_;
  std::vector<ChannelSlot> channels_;
  std::map<rdma_cm_id*, std::unique_ptr<Connection>> viewers_;
  std::vector<std::unique_ptr<Connection>> draining_;  // disconnected; destroyed once their work requests have flushed
  loop::Reactor::Timer reap_timer_;   // armed while draining_ is not empty
};

}  // namespace vod::server::live
