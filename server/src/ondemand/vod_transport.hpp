// SPDX-License-Identifier: LGPL-2.1-or-later
// The VoD transport: movie and catalog clients over rdma_cm, each a VodConnection it owns. It sets
// them up (an rdma_cm QP, or a QP of their own with memory windows bound before the accept), cuts
// them off (revocation, token expiry, the drain's end), and keeps the ones that failed while their
// QPs drain (cm::DrainingConnections): rejected at once, their grants given back at once, destroyed
// once every work request they counted has completed as a flush (or after kDrainLimit) — never a
// QP destroyed, nor its share of the CQ given back, while a flush of it can still arrive.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "cm/draining.hpp"
#include "cm/routes.hpp"
#include "cm/transport.hpp"
#include "loop/completion_source.hpp"
#include "loop/reactor.hpp"
#include "metrics/server_metrics.hpp"
#include "ondemand/vod_connection.hpp"
#include "windows/connection_pd.hpp"
#include "windows/slot_watchers.hpp"

namespace vod::server::ondemand {

class VodTransport final : public cm::Transport {
 public:
  // Clients binding windows at once, at most: each could leave 3 completions (a failed bind and the
  // flushes after it) where 1024 fit (the window CQ this bound before the hub shared one).
  static constexpr std::size_t kMaxBinding = 341;

  struct Context {
    loop::Reactor& reactor;
    loop::CompletionSource& completions;
    cm::Routes& routes;
    ServerMetrics& metrics;
    std::function<std::size_t()> clients;            // every transport's connections, for log lines
    std::function<void()> changed;                   // the counts changed outside a CM event (an accept after a bind)
    cache::SegmentCache* cache = nullptr;            // with --cache-size: every connection gets a SegmentChannel
    windows::SlotWatchers* slot_watchers = nullptr;  // with a cache: who holds windows over which slot
    windows::PinnedBudget* pinned = nullptr;         // --isolation pd: what connections' own registrations may pin
  };
  // Windows over cache slots one connection holds at most (with tokens): a sequential reader holds
  // about window_keep() of segments; at the cap, an answer waits for the first lease to end.
  static constexpr std::size_t kMaxSlotWindows = 256;
  explicit VodTransport(Context context);
  ~VodTransport() override;
  VodTransport(const VodTransport&) = delete;
  VodTransport& operator=(const VodTransport&) = delete;

  void accept(cm::Accepting a) override;
  std::size_t connections() const noexcept override { return connections_.size(); }
  void cut_off_if(const std::function<std::optional<std::string>(const auth::Grant&)>& why) override;
  void begin_drain() override {}  // VoD clients read on until the drain's end
  void cut_off_all() override;
  void count(ServerMetrics::ConnectionCounts& counts) const override;
  // Destroys the failed connections whose QP has flushed (force: all, at exit).
  void reap_failed(bool force = false) { failed_.reap(force); }
  std::size_t failed() const noexcept { return failed_.size(); }
  const ChannelStats& channel_stats() const noexcept { return channel_stats_; }

 private:
  friend class VodConnection;
  // The connection's actions that end it (VodConnection::handle): reject it (internal error) and
  // drain its QP before destroying it; destroy it now (its peer went, the event is acknowledged).
  void fail(VodConnection& c, const std::string& why);
  void destroy(VodConnection& c);
  void accepted(VodConnection& c);  // counts an accept (the connection logs it)
  VodConnection::Setup setup() noexcept;

  Context ctx_;
  std::unordered_map<const VodConnection*, std::unique_ptr<VodConnection>> connections_;
  std::size_t binding_ = 0;                        // of them, binding windows
  cm::DrainingConnections<VodConnection> failed_;  // rejected or gone; destroyed once their QPs have flushed
  ChannelStats channel_stats_;                     // every connection's segment requests
};

}  // namespace vod::server::ondemand
