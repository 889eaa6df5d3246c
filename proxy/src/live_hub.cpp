// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_hub.hpp"

#include "vod/log.hpp"

namespace vod::proxy {

namespace asio = boost::asio;

// ---------------------------------------------------------------- LiveViewer

LiveViewer::LiveViewer(std::shared_ptr<LiveHub> hub, std::string peer) : hub_(std::move(hub)), peer_(std::move(peer)) { hub_->join(this); }

LiveViewer::~LiveViewer() { hub_->leave(this); }

void LiveViewer::next(Ready ready) {
  const BacklogStep step = hub_->backlog().next(cursor_);
  if (step.chunk) {
    if (step.discontinuity) {
      ++hub_->skips_;
      hub_->metrics_.live_skip(step.skipped_bytes);
      log::info("live", "'" + hub_->channel() + "' to " + peer_ + ": the viewer fell behind the proxy's " +
                            std::to_string(hub_->backlog().capacity() / 1024) + " KiB buffer (--live-buffer-kib); skipped " +
                            std::to_string(step.skipped_bytes) + " bytes to the newest keyframe (a discontinuity)");
    }
    asio::post(hub_->io_, [ready = std::move(ready), step] { ready(step, ""); });
    return;
  }
  if (!hub_->end_reason().empty()) {
    asio::post(hub_->io_, [ready = std::move(ready), error = hub_->end_reason()] { ready(BacklogStep{}, error); });
    return;
  }
  waiting_ = std::move(ready);
}

void LiveViewer::offer() {
  if (!waiting_) return;
  Ready ready = std::move(waiting_);
  waiting_ = nullptr;
  next(std::move(ready));
}

// ---------------------------------------------------------------- LiveHub

LiveHub::LiveHub(asio::io_context& io, std::string channel, std::shared_ptr<LiveRelay> relay, const LiveHubSettings& settings,
                 ProxyMetrics& metrics, std::function<void(LiveHub*)> closed)
    : io_(io),
      channel_(std::move(channel)),
      relay_(std::move(relay)),
      settings_(settings),
      metrics_(metrics),
      closed_callback_(std::move(closed)),
      read_buffer_(settings.read_bytes),
      backlog_(settings.backlog_bytes),
      linger_(io) {}

LiveHub::~LiveHub() {
  if (!closed_) {
    closed_ = true;
    relay_->close();
    metrics_.live_channel_closed();
  }
}

void LiveHub::start() {
  metrics_.live_channel_opened();
  log::info("live", "'" + channel_ + "': opened the channel's session; every viewer of it shares it");
  read();
}

void LiveHub::read() {
  relay_->next(std::span<std::uint8_t>(read_buffer_), [weak = weak_from_this()](const client::LiveChunk& chunk, const std::string& error) {
    if (auto self = weak.lock()) self->on_read(chunk, error);
  });
}

void LiveHub::on_read(const client::LiveChunk& chunk, const std::string& error) {
  if (closed_) return;
  if (!error.empty()) return close("the session ended: " + error, true);
  bytes_read_ += chunk.bytes;
  metrics_.live_read(chunk.bytes);
  auto chunks = chunker_.feed(std::span<const std::uint8_t>(read_buffer_.data(), chunk.bytes), chunk.discontinuity);
  for (auto& c : chunks) backlog_.append(std::move(c));
  if (!chunks.empty()) {
    const std::vector<LiveViewer*> viewers(viewers_.begin(), viewers_.end());
    for (LiveViewer* v : viewers) v->offer();  // posts, never re-enters
  }
  read();
}

void LiveHub::close(const std::string& why, bool failure) {
  if (closed_) return;
  const auto self = shared_from_this();  // the registry may drop the last other reference below
  closed_ = true;
  end_reason_ = why;
  linger_.cancel();
  relay_->close();
  metrics_.live_channel_closed();
  const std::string summary = std::to_string(bytes_read_) + " bytes read, " + std::to_string(chunker_.stats().keyframes) + " keyframes, " +
                              std::to_string(viewers_served_) + " viewers served, " + std::to_string(skips_) + " skips";
  if (failure)
    log::warn("live",
              "'" + channel_ + "': " + why + "; ending its " + std::to_string(viewers_.size()) + " viewers' responses (" + summary + ")");
  else log::info("live", "'" + channel_ + "': closed the session: " + why + " (" + summary + ")");
  if (auto closed = std::move(closed_callback_)) closed(this);
  closed_callback_ = nullptr;
  const std::vector<LiveViewer*> viewers(viewers_.begin(), viewers_.end());
  for (LiveViewer* v : viewers) v->offer();
}

void LiveHub::join(LiveViewer* viewer) {
  viewers_.insert(viewer);
  ++viewers_served_;
  metrics_.live_viewer_joined();
  linger_.cancel();
}

void LiveHub::leave(LiveViewer* viewer) {
  viewers_.erase(viewer);
  if (detached_) return;  // the proxy is stopping: its metrics and io may be gone
  metrics_.live_viewer_left();
  if (!viewers_.empty() || closed_) return;
  linger_.expires_after(settings_.linger);
  linger_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!ec && self && self->viewers_.empty())
      self->close("no viewer for " + std::to_string(self->settings_.linger.count()) + " ms", false);
  });
}

// ---------------------------------------------------------------- LiveHubs

LiveHubs::LiveHubs(RdmaPool& pool, ProxyMetrics& metrics, LiveHubSettings settings) : pool_(pool), metrics_(metrics), settings_(settings) {}

LiveHubs::~LiveHubs() {
  *alive_ = false;
  auto hubs = std::move(hubs_);
  for (auto& [name, hub] : hubs) {
    hub->detach();
    hub->close("the proxy is stopping", false);
  }
}

void LiveHubs::subscribe(const std::string& channel, const std::string& peer, Subscribed done) {
  if (auto it = hubs_.find(channel); it != hubs_.end() && it->second->end_reason().empty()) {
    auto viewer = std::make_unique<LiveViewer>(it->second, peer);
    asio::post(pool_.io(), [done = std::move(done), viewer = std::move(viewer)]() mutable { done(std::move(viewer), {}); });
    return;
  }
  auto& waiters = opening_[channel];
  waiters.push_back({peer, std::move(done)});
  if (waiters.size() > 1) return;  // its open is under way
  client::Uri uri = pool_.server_uri();
  uri.movie = channel;
  uri.live = true;
  client::LiveOptions rdma = pool_.live_options();
  rdma.reconnect.in_place = false;  // a broken session ends the hub (its viewers' responses end; the next viewer reopens)
  std::optional<client::MulticastLiveOptions> multicast;
  if (pool_.udp()) multicast = pool_.multicast_options();
  pool_.opener().open_live(std::move(uri), std::move(rdma), std::move(multicast),
                           [this, alive = alive_, channel](std::unique_ptr<client::LiveSource> source, const std::string& error) {
                             if (*alive) opened(channel, std::move(source), error);
                           });
}

void LiveHubs::opened(const std::string& channel, std::unique_ptr<client::LiveSource> source, const std::string& error) {
  auto waiting = opening_.find(channel);
  if (waiting == opening_.end()) return;
  std::vector<Waiter> waiters = std::move(waiting->second);
  opening_.erase(waiting);
  if (!source) {
    for (auto& w : waiters) w.done(nullptr, error);
    return;
  }
  const auto idle_look = pool_.udp() ? std::chrono::milliseconds(50) : std::chrono::milliseconds(200);
  auto relay = std::make_shared<LiveRelay>(pool_.io(), std::move(source), idle_look);
  auto hub = std::make_shared<LiveHub>(pool_.io(), channel, std::move(relay), settings_, metrics_, [this](LiveHub* closed) {
    auto found = hubs_.find(closed->channel());
    if (found != hubs_.end() && found->second.get() == closed) hubs_.erase(found);
  });
  hubs_[channel] = hub;
  // The viewers join before the hub reads: the first bytes go to every one of them.
  std::vector<std::pair<std::unique_ptr<LiveViewer>, Subscribed>> joined;
  for (auto& w : waiters) joined.emplace_back(std::make_unique<LiveViewer>(hub, w.peer), std::move(w.done));
  hub->start();
  for (auto& [viewer, done] : joined) done(std::move(viewer), {});
}

}  // namespace vod::proxy
