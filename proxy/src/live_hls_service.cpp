// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_hls_service.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "vod/log.hpp"

namespace vod::proxy {

namespace asio = boost::asio;

namespace {

LiveHlsReply body(std::string_view bytes) { return {200, std::string(bytes), {}, false}; }
LiveHlsReply failure(unsigned status, std::string why, bool retry = false) { return {status, {}, std::move(why), retry}; }

std::string part_name(std::uint64_t msn, std::size_t part) { return std::to_string(msn) + "." + std::to_string(part); }

}  // namespace

// ---------------------------------------------------------------- LiveHlsService

LiveHlsService::LiveHlsService(asio::io_context& io, LiveHubs& hubs, LiveHlsServiceSettings settings)
    : io_(io), hubs_(hubs), settings_(settings) {}

LiveHlsService::~LiveHlsService() {
  *alive_ = false;
  // The io thread has stopped: what waits is dropped here, not answered later (the connections it
  // holds must go while the pool and the metrics they use still exist).
  auto channels = std::move(channels_);
  for (auto& [name, channel] : channels) channel->close("the proxy is stopping", LiveHlsChannel::Closing::proxy_stopping);
}

void LiveHlsService::request(const LiveHlsWant& want, const std::string& peer, Done done) {
  auto it = channels_.find(want.channel);
  if (it == channels_.end()) {
    // Segments numbered by the clock (seconds since 1970 over the segment target), and past the
    // last packaging of the channel: a URI never names other bytes, and never starts at 0.
    const auto by_clock = static_cast<std::uint64_t>(
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() / settings_.packaging.segment_seconds);
    const auto last = next_msn_.find(want.channel);
    auto channel = std::make_shared<LiveHlsChannel>(io_, *this, want.channel, settings_,
                                                    last == next_msn_.end() ? by_clock : std::max(by_clock, last->second));
    it = channels_.emplace(want.channel, channel).first;
    channel->open(hubs_, peer);
  }
  const auto channel = it->second;  // serve() may close it, and the map forget it
  channel->serve(want, std::move(done));
}

void LiveHlsService::forget(LiveHlsChannel* channel, std::uint64_t next_msn) {
  for (auto it = channels_.begin(); it != channels_.end(); ++it)
    if (it->second.get() == channel) {
      next_msn_[it->first] = next_msn;
      channels_.erase(it);
      return;
    }
}

// ---------------------------------------------------------------- LiveHlsChannel

LiveHlsChannel::LiveHlsChannel(asio::io_context& io, LiveHlsService& service, std::string name, const LiveHlsServiceSettings& settings,
                               std::uint64_t first_msn)
    : io_(io), service_(service), name_(std::move(name)), settings_(settings), packager_(settings.packaging, first_msn), idle_(io) {}

LiveHlsChannel::~LiveHlsChannel() = default;

void LiveHlsChannel::open(LiveHubs& hubs, const std::string& peer) {
  touch();
  hubs.subscribe(name_, peer + " (HLS)", [weak = weak_from_this()](std::unique_ptr<LiveViewer> viewer, const std::string& error) {
    auto self = weak.lock();
    if (!self || !self->error_.empty()) return;
    if (!viewer) return self->close("cannot open the live channel '" + self->name_ + "': " + error, Closing::failed);
    self->viewer_ = std::move(viewer);
    char what[96];
    std::snprintf(what, sizeof what, "%g s segments, %g s parts, %zu segments in the playlist", self->settings_.packaging.segment_seconds,
                  self->settings_.packaging.part_seconds, self->settings_.packaging.window_segments);
    log::info("hls", "'" + self->name_ + "': packaging the channel as LL-HLS (" + what + ")");
    self->pull();
  });
}

void LiveHlsChannel::touch() {
  idle_.expires_after(settings_.idle);
  idle_.async_wait([weak = weak_from_this()](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (ec || !self) return;
    if (self->idle_.expiry() > std::chrono::steady_clock::now()) return;  // queued before a request moved it on
    if (!self->waiting_.empty()) return self->touch();
    self->close("no HLS request for " + std::to_string(self->settings_.idle.count()) + " s", Closing::idle);
  });
}

void LiveHlsChannel::pull() {
  viewer_->next([weak = weak_from_this()](const BacklogStep& step, const std::string& error) {
    auto self = weak.lock();
    if (!self || !self->viewer_) return;
    if (!error.empty()) return self->close("the channel's session ended: " + error, Closing::failed);
    self->packager_.feed(*step.chunk, std::chrono::system_clock::now(), step.discontinuity);
    self->playlist_.reset();
    self->wake();
    self->pull();
  });
}

std::optional<LiveHlsReply> LiveHlsChannel::answer(const LiveHlsWant& want) const {
  if (!error_.empty()) return failure(503, error_, true);
  const LiveHlsPackager& p = packager_;
  switch (want.kind) {
    case LiveHlsWant::Kind::playlist:
      if (!p.ready() || (!want.block && !p.holds_back())) return std::nullopt;
      if (want.block) {
        const LiveHlsPosition& b = *want.block;
        if (b.msn > p.last_msn() + 2)
          return failure(400, "_HLS_msn=" + std::to_string(b.msn) + " is more than two segments past the newest (" +
                                  std::to_string(p.last_msn()) + "); reload the playlist without it");
        if (!p.has(b)) return std::nullopt;
      }
      return body(playlist());
    case LiveHlsWant::Kind::segment:
      if (auto s = p.segment(want.msn)) return body(*s);
      if (want.msn < p.first_msn())
        return failure(
            404, "segment " + std::to_string(want.msn) + " has left the live window (it begins at " + std::to_string(p.first_msn()) + ")");
      if (want.msn == p.last_msn()) return std::nullopt;  // being made: it is answered when it is finished
      return failure(
          404, "segment " + std::to_string(want.msn) + " is not in the playlist (the newest is " + std::to_string(p.last_msn()) + ")");
    case LiveHlsWant::Kind::part: {
      if (auto s = p.part(want.msn, want.part)) return body(*s);
      if (want.msn < p.first_msn())
        return failure(404, "part " + part_name(want.msn, want.part) + " has left the live window (it begins at segment " +
                                std::to_string(p.first_msn()) + ")");
      const LiveHlsPosition hint = p.next_part();
      if (want.msn == hint.msn && want.part == hint.part) return std::nullopt;  // the preload hint: answered when finished
      return failure(
          404, "part " + part_name(want.msn, want.part) + " is not in the playlist (the next is " + part_name(hint.msn, *hint.part) + ")");
    }
  }
  return failure(500, "unknown HLS request");
}

const std::string& LiveHlsChannel::playlist() const {
  if (!playlist_) playlist_ = packager_.playlist();
  return *playlist_;
}

void LiveHlsChannel::serve(const LiveHlsWant& want, LiveHlsService::Done done) {
  touch();
  ++requests_;
  if (auto a = answer(want)) {
    asio::post(io_, [done = std::move(done), a = std::move(*a)]() mutable { done(std::move(a)); });
    return;
  }
  // rfc8216bis: a blocking request that cannot be answered in three target durations gets 503.
  const auto wait = packager_.holds_back() ? std::chrono::milliseconds(std::chrono::seconds(3 * std::uint64_t{packager_.target_duration()}))
                                           : first_wait();
  const std::uint64_t id = ++next_waiter_;
  waiting_.push_back(Waiter{id, want, std::move(done), std::make_unique<asio::steady_timer>(io_, wait)});
  waiting_.back().timer->async_wait([weak = weak_from_this(), id](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->expire(id);
  });
}

std::chrono::milliseconds LiveHlsChannel::first_wait() const {
  // The join (up to a GOP), three segments, and the session's open: 10 s and five segment targets.
  return std::chrono::milliseconds(10000 + static_cast<long>(5000 * settings_.packaging.segment_seconds));
}

void LiveHlsChannel::wake() {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    auto a = answer(it->want);
    if (!a) {
      ++it;
      continue;
    }
    asio::post(io_, [done = std::move(it->done), a = std::move(*a)]() mutable { done(std::move(a)); });
    it = waiting_.erase(it);
  }
}

void LiveHlsChannel::expire(std::uint64_t id) {
  // Found by its id: a timer that fired while its waiter was being answered finds nothing.
  const auto it = std::find_if(waiting_.begin(), waiting_.end(), [id](const Waiter& w) { return w.id == id; });
  if (it == waiting_.end()) return;
  std::string why = packager_.holds_back()
                        ? "not made within three target durations (" + std::to_string(3 * packager_.target_duration()) + " s)"
                        : "the channel made less than three target durations of HLS segments within " +
                              std::to_string(std::chrono::duration_cast<std::chrono::seconds>(first_wait()).count()) + " s of opening";
  asio::post(io_, [done = std::move(it->done), why = "'" + name_ + "': " + why]() mutable { done(failure(503, why, true)); });
  waiting_.erase(it);
}

void LiveHlsChannel::close(const std::string& why, Closing closing) {
  if (!error_.empty()) return;
  const auto self = shared_from_this();  // the service forgets it below
  error_ = why;
  idle_.cancel();
  viewer_.reset();  // leaves the hub
  const std::string summary = std::to_string(packager_.segments_made()) + " segments made, " + std::to_string(requests_) + " requests";
  if (closing == Closing::failed) log::warn("hls", "'" + name_ + "': " + why + " (" + summary + ")");
  else log::info("hls", "'" + name_ + "': stopped packaging: " + why + " (" + summary + ")");
  if (closing == Closing::proxy_stopping) waiting_.clear();
  else wake();  // every waiter gets the 503
  service_.forget(this, packager_.last_msn() + 1);
}

}  // namespace vod::proxy
