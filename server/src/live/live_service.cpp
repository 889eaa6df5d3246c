// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/live_service.hpp"

#include <gst/gst.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "vod/log.hpp"
#include "vod/protocol/catalog_layout.hpp"
#include "vod/protocol/write_record.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/error.hpp"

namespace vod::server::live {

namespace {
constexpr auto kDrainLimit = std::chrono::seconds(5);
constexpr std::size_t kMinRing = 256u << 10;  // room for a few records of 64 KiB at any bitrate

proto::RegionDescriptor describe(const ibv_mr* mr, std::uint64_t length) {
  return {reinterpret_cast<std::uint64_t>(mr->addr), length, mr->rkey};
}
}  // namespace

ChannelConfig parse_channel(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument("--live '" + text + "' must be NAME=SOURCE, e.g. cam=udp://239.0.0.1:5000 or demo=file:/srv/loop.ts");
  ChannelConfig c;
  c.name = text.substr(0, eq);
  if (const char* why = proto::invalid_name_reason(c.name)) throw std::invalid_argument("--live channel name '" + c.name + "': " + why);
  c.source = parse_source(text.substr(eq + 1));
  return c;
}

LiveService::LiveService(Context context, std::vector<ChannelConfig> configs, LiveOptions options)
    : ctx_(std::move(context)), reactor_(ctx_.reactor), completions_(ctx_.completions), hub_(ctx_.completions.hub()), options_(std::move(options)) {
  if (configs.empty()) return;
  wake_fd_.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd_) throw std::runtime_error(std::string("eventfd: ") + std::strerror(errno));
  wake_in_loop_ = reactor_.add(wake_fd_.get(), [this] { on_wake(); });
  completions_.after_poll([this] { on_polled(); });
  bool gst = false;
  for (auto& c : configs) {
    for (const auto& other : channels_)
      if (other.channel->name() == c.name) throw std::invalid_argument("--live: the channel name '" + c.name + "' is given twice");
    double bps = estimated_bitrate_bps(c.source);
    const bool known = bps > 0;
    if (!known) bps = options_.assumed_bitrate_bps;
    const auto ring = std::max(kMinRing, static_cast<std::size_t>(options_.buffer_seconds * bps / 8));
    ChannelSlot slot;
    slot.channel = std::make_unique<Channel>(c.name, ring, options_.max_record_bytes, wake_fd_.get());
    slot.source = make_source(c.source, options_.source);
    log::info("live", c.name + ": " + c.source.text + ", ring of " + std::to_string(ring >> 10) + " KiB (" +
                          std::to_string(options_.buffer_seconds).substr(0, 4) + " s at " + std::to_string(static_cast<long>(bps / 1000)) +
                          " kb/s" + (known ? "" : ", assumed: --live-bitrate") + ")");
    gst = gst || c.source.kind == SourceSpec::Kind::gst;
    if (options_.multicast) attach_multicast(slot);
    channels_.push_back(std::move(slot));
  }
  if (gst) {
    GError* error = nullptr;
    if (!gst_init_check(nullptr, nullptr, &error)) {
      const std::string why = error ? error->message : "unknown error";
      if (error) g_error_free(error);
      throw std::runtime_error("GStreamer cannot start (gst: sources need it): " + why);
    }
  }
}

void LiveService::attach_multicast(ChannelSlot& slot) {
  slot.multicast = std::make_unique<udp::MulticastSender>(*options_.multicast);
  const std::uint32_t id = proto::live_channel_id(slot.channel->name());
  slot.channel->set_tap([sender = slot.multicast.get(), id](const RecordInfo& info, std::span<const std::uint8_t> bytes) {
    udp::MulticastRecord r;
    r.channel_id = id;
    r.stream_id = info.stream_id;
    r.number = info.number;
    r.stream_offset = info.offset;
    r.flags = static_cast<std::uint16_t>(((info.flags & proto::kLiveKeyframe) ? proto::kRecordKeyframe : 0) |
                                         ((info.flags & proto::kLiveUnitStart) ? proto::kRecordUnitStart : 0) |
                                         ((info.flags & proto::kLiveDiscontinuity) ? proto::kRecordDiscontinuity : 0) |
                                         ((info.flags & proto::kLiveEndOfStream) ? proto::kRecordEndOfStream : 0));
    r.bytes = bytes;
    sender->send(r);
  });
  char id_text[16];
  std::snprintf(id_text, sizeof id_text, "%08x", id);
  log::info("live", slot.channel->name() + ": multicast to " + slot.multicast->destination() + " as channel id " + id_text + ", " +
                        std::to_string(slot.multicast->payload()) + "-byte payloads");
}

LiveService::~LiveService() {
  for (auto& c : channels_) {
    c.thread.request_stop();
    if (c.thread.joinable()) c.thread.join();
    if (c.multicast) {
      const auto& m = c.multicast->stats();
      log::info("live", c.channel->name() + ": multicast sent " + std::to_string(m.records) + " records in " + std::to_string(m.datagrams) +
                            " datagrams, " + std::to_string(m.bytes) + " bytes; " + std::to_string(m.send_errors) + " send errors");
    }
  }
}

bool LiveService::has(const std::string& name) const noexcept {
  return std::any_of(channels_.begin(), channels_.end(), [&](const ChannelSlot& c) { return c.channel->name() == name; });
}

void LiveService::start() {
  for (auto& c : channels_)
    c.thread = std::jthread([&c](std::stop_token stop) {
      try {
        c.source->run(stop, *c.channel);
      } catch (const std::exception& e) {
        log::error("live", c.channel->name() + ": the source stopped: " + e.what());
        c.channel->end_stream(e.what());
      }
    });
}

void LiveService::register_device(const std::shared_ptr<Device>& device) {
  if (channels_.empty() || std::find(devices_.begin(), devices_.end(), device) != devices_.end()) return;
  devices_.push_back(device);
  for (auto& c : channels_) {
    // REMOTE_READ only (or, with memory windows, binding only), and exactly the bytes the catalog advertises.
    Regions r;
    r.ring = rdma::register_memory(device->pd.get(), c.channel->ring().ring_memory().data(), c.channel->ring().size(),
                                   device->region_access(), "the ring of live channel " + c.channel->name());
    r.header = rdma::register_memory(device->pd.get(), c.channel->ring().header_memory().data(), sizeof(proto::WireLiveHeader),
                                     device->region_access(), "the live header of " + c.channel->name());
    c.regions[device->context] = std::move(r);
  }
}

std::vector<proto::CatalogEntry> LiveService::catalog_entries(ibv_context* ctx) const {
  std::vector<proto::CatalogEntry> out;
  for (const auto& c : channels_) {
    auto r = c.regions.find(ctx);
    if (ctx && r == c.regions.end()) continue;
    proto::CatalogEntry e;
    e.name = c.channel->name();
    e.size = c.channel->ring().size();
    e.movie = ctx ? describe(r->second.ring.get(), e.size) : proto::RegionDescriptor{0, e.size, 0};
    e.index = ctx ? describe(r->second.header.get(), sizeof(proto::WireLiveHeader)) : proto::RegionDescriptor{0, sizeof(proto::WireLiveHeader), 0};
    e.flags = proto::kEntryIsMedia | proto::kEntryLive;
    e.container = "mpegts";
    e.mime_type = "video/mp2t";
    out.push_back(std::move(e));
  }
  return out;
}

void LiveService::on_wake() {
  std::uint64_t n = 0;
  (void)!::read(wake_fd_.get(), &n, sizeof n);
  std::vector<RecordInfo> fresh;
  for (std::size_t i = 0; i < channels_.size(); ++i) {
    fresh.clear();
    channels_[i].channel->drain(fresh);
    if (fresh.empty()) continue;
    for (const auto& r : fresh) channels_[i].view.add(r);
    pump_channel(i);
  }
}

void LiveService::pump_channel(std::size_t channel) {
  for (auto it = viewers_.begin(); it != viewers_.end();) {
    auto next = std::next(it);
    if (it->second->channel == channel) service(*it->second);
    it = next;
  }
  reap();
}

void LiveService::service(Connection& c) {
  if (!c.accept_data.empty()) return;  // not accepted yet: on_polled decides
  c.viewer->pump(channels_[c.channel].view);
  if (c.viewer->failed() && c.viewer->state() != Viewer::State::draining) {
    log::warn("live", c.viewer->peer() + ": disconnecting from '" + c.viewer->channel() + "': " + c.viewer->failure());
    c.viewer->begin_drain(c.viewer->failure());
    rdma_disconnect(c.id.get());  // its DISCONNECTED event retires it
  }
}

void LiveService::on_polled() {
  {
    for (auto it = viewers_.begin(); it != viewers_.end();) {
      auto next = std::next(it);
      Connection& c = *it->second;
      if (!c.accept_data.empty()) {  // binding its windows: accept once bound, refuse if that failed
        const bool accepted = c.viewer->take_bound() && finish_accept(c);
        if (!accepted && (c.viewer->failed() || c.viewer->state() != Viewer::State::binding)) {
          log::error("live", c.viewer->peer() + ": cannot set up the connection: " + (c.viewer->failed() ? c.viewer->failure() : "the accept failed"));
          rdma::reject(c.id.get(), proto::encode_reject(proto::RejectCode::internal_error, "the server could not set up the connection"));
          retire(it, "not accepted");
        }
        it = next;
        continue;
      }
      if (c.viewer->take_wants_pump() || c.viewer->failed()) service(c);
      it = next;
    }
  }
  reap();
}

void LiveService::accept(cm::Accepting a) {
  rdma::CmIdHandle& id = a.id;
  const std::shared_ptr<CatalogRegistration>& catalog = a.catalog;
  const std::uint32_t entry = a.admit.entry;
  const std::uint8_t depth = a.depth;
  const std::string& peer = a.peer;
  const proto::CatalogEntry& e = catalog->catalog.entries.at(entry);
  std::size_t index = 0;
  while (index < channels_.size() && channels_[index].channel->name() != e.name) ++index;
  if (index == channels_.size()) throw std::logic_error("catalog entry '" + e.name + "' is not a live channel of this server");
  Device& device = *catalog->device;
  const Regions& regions = channels_[index].regions.at(device.context);
  proto::AcceptData accept = catalog->accept_common();
  accept.movie_index = entry;
  accept.movie = describe(regions.ring.get(), e.size);  // the catalog's copy has no rkey with windows
  accept.index = describe(regions.header.get(), sizeof(proto::WireLiveHeader));
  accept.granted_read_depth = depth;
  auto conn = std::make_unique<Connection>(*this);
  Connection& c = *conn;
  c.catalog = catalog;
  c.channel = index;
  c.since = std::chrono::steady_clock::now();
  if (device.windows) {
    // Windows over exactly the ring, the header and the catalog, bound to this viewer's own QP;
    // the accept goes out when the binds complete (finish_accept).
    Viewer::WindowPlan plan{{{regions.ring.get(), accept.movie}, {regions.header.get(), accept.index}, {catalog->mr.get(), accept.catalog}},
                            &device.rkeys, depth, kRnrRetry};
    c.viewer = std::make_unique<Viewer>(id.get(), device.pd.get(), device.limits, hub_, options_.depths, peer, e.name, &plan);
    const auto& w = c.viewer->window_regions();
    accept.movie = w[0];
    accept.index = w[1];
    accept.catalog = w[2];
    c.accept_data = proto::encode(accept);
    c.depth = depth;
  } else {
    c.viewer = std::make_unique<Viewer>(id.get(), device.pd.get(), device.limits, hub_, options_.depths, peer, e.name);
    rdma::accept(id.get(), proto::encode(accept), depth, kRnrRetry);
  }
  rdma_cm_id* raw = id.get();
  c.route = ctx_.routes.add(raw, c);
  c.id = std::move(id);
  c.grant = std::move(a.grant);
  if (const auto deadline = c.grant.deadline()) c.expiry = reactor_.at(*deadline, [this, raw] { expire(raw); });
  viewers_.emplace(raw, std::move(conn));
  log::info("server", "accept " + peer + ": " + server::describe(a.admit, catalog->catalog) + ", read depth " + std::to_string(depth) + ", " +
                          std::to_string(ctx_.clients()) + " connected");
  ctx_.metrics.count_accept("live");
  // Arm, then poll: the binds, or the viewer's first credit (it may Send as soon as the accept is
  // out), may have completed on a CQ that was never armed, and then no event would ever come. The
  // first viewer of a channel with no other viewers stayed without a notification this way.
  completions_.drain();
}

bool LiveService::finish_accept(Connection& c) {
  try {
    rdma::accept_with_qp(c.id.get(), c.viewer->qp(), c.accept_data, c.depth, kRnrRetry);
  } catch (const std::exception& e) {
    log::error("live", c.viewer->peer() + ": " + e.what());
    c.viewer->begin_drain("the accept failed");  // on_polled then refuses and retires it
    return false;
  }
  c.accept_data.clear();
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - c.since).count();
  log::info("live", c.viewer->peer() + ": accepted for '" + c.viewer->channel() + "' after binding 3 memory windows in " + std::to_string(us) + " us");
  return true;
}

void LiveService::cut_off(rdma_cm_id* id) {
  auto it = viewers_.find(id);
  if (it == viewers_.end()) return;
  it->second->viewer->begin_drain("cut off");  // windows invalidated, QP in the error state: reads fail now
  rdma_disconnect(id);  // its DISCONNECTED event retires it
}

void LiveService::cut_off_if(const std::function<std::optional<std::string>(const auth::Grant&)>& why) {
  std::vector<rdma_cm_id*> gone;
  for (const auto& [id, c] : viewers_)
    if (auto reason = why(c->grant)) {
      log::warn("auth", "disconnecting " + c->grant.terms().peer + ": " + *reason);
      gone.push_back(id);
    }
  for (rdma_cm_id* id : gone) cut_off(id);
}

void LiveService::begin_drain() {
  if (!viewers_.empty()) log::info("server", "disconnecting " + std::to_string(viewers_.size()) + " live viewer(s)");
  disconnect_all();
}

void LiveService::expire(rdma_cm_id* id) {
  auto it = viewers_.find(id);
  if (it == viewers_.end()) return;  // cannot happen: a retired viewer's timer is cancelled
  log::info("auth", "disconnecting " + it->second->viewer->peer() + ": its token expired (live channel '" + it->second->viewer->channel() + "')");
  cut_off(id);
}

void LiveService::on_cm_event(Connection& c, rdma::CmEvent& event) {
  auto it = viewers_.find(c.id.get());
  if (it == viewers_.end()) return;  // cannot happen: a retired viewer's route is gone
  switch (event.type()) {
    case RDMA_CM_EVENT_ESTABLISHED:
      log::debug("live", c.viewer->peer() + ": established");
      return;
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT: {
      const std::string why = event.type_name();
      event.release();  // rdma_destroy_id waits for the acknowledgement; the event is gone from here
      return retire(it, why);
    }
    default:
      return;
  }
}

void LiveService::retire(std::map<rdma_cm_id*, std::unique_ptr<Connection>>::iterator it, const std::string& why) {
  Connection& c = *it->second;
  const auto& s = c.viewer->stats();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - c.since).count();
  log::info("server", "disconnect " + c.viewer->peer() + ": live channel '" + c.viewer->channel() + "' after " +
                          std::to_string(secs).substr(0, 5) + " s (" + why + "), " + std::to_string(s.notifications) + " notifications, " +
                          std::to_string(s.coalesced) + " coalesced, " + std::to_string(viewers_.size() - 1) + " live viewers");
  c.viewer->begin_drain(why);
  c.grant.release();  // its address has one connection less now, not once the QP has flushed
  c.expiry.cancel();
  c.route.reset();  // a late event of its id (TIMEWAIT_EXIT) finds no owner and is dropped
  draining_.push_back(std::move(it->second));
  viewers_.erase(it);
  reap();
}

void LiveService::reap(bool force) {
  if (draining_.empty()) return;
  hub_.poll();  // flushes of the draining QPs
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(draining_, [&](const std::unique_ptr<Connection>& c) {
    if (c->viewer->drained()) return true;
    if (force || now - c->viewer->drain_started() > kDrainLimit) {
      log::warn("live", c->viewer->peer() + ": its work requests did not flush within " + std::to_string(kDrainLimit.count()) +
                            " s; destroying its QP anyway");
      return true;
    }
    return false;
  });
  // Flushes may take a while (or never come): look again soon while any viewer drains.
  if (!draining_.empty() && !reap_timer_.armed()) reap_timer_ = reactor_.at(std::chrono::steady_clock::now() + kReapEvery, [this] { reap(); });
}

void LiveService::disconnect_all() {
  for (auto& [id, c] : viewers_) rdma_disconnect(id);
}

void LiveService::count(ServerMetrics::ConnectionCounts& counts) const {
  for (const auto& slot : channels_) counts[{"live", slot.channel->name()}] = 0;  // every channel appears
  for (const auto& [id, c] : viewers_) ++counts[{"live", channels_[c->channel].channel->name()}];
}

}  // namespace vod::server::live
