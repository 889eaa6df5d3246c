// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/live_transport.hpp"

#include <algorithm>
#include <stdexcept>

#include "vod/log.hpp"
#include "vod/protocol/live_messages.hpp"
#include "vod/rdma/connection.hpp"
#include "vod/rdma/error.hpp"

namespace vod::server::live {

namespace {

proto::RegionDescriptor describe(const ibv_mr* mr, std::uint64_t length) {
  return {reinterpret_cast<std::uint64_t>(mr->addr), length, mr->rkey};
}
}  // namespace

LiveTransport::LiveTransport(Context context, Channels& channels, Viewer::Depths depths)
    : ctx_(std::move(context)),
      reactor_(ctx_.reactor),
      completions_(ctx_.completions),
      hub_(ctx_.completions.hub()),
      channels_(channels),
      depths_(depths),
      draining_(reactor_, "live", [this] { hub_.poll(); }) {  // the poll: flushes of the draining QPs
  if (channels_.empty()) return;
  channels_.on_records([this](std::size_t channel) { pump_channel(channel); });
  completions_.after_poll([this] { on_polled(); });
}

LiveTransport::~LiveTransport() {
  viewers_.clear();
  draining_.clear();
}

void LiveTransport::pump_channel(std::size_t channel) {
  for (auto it = viewers_.begin(); it != viewers_.end();) {
    auto next = std::next(it);
    if (it->second->channel == channel) service(*it->second);
    it = next;
  }
  reap();
}

void LiveTransport::service(Connection& c) {
  if (!c.accept_data.empty()) return;  // not accepted yet: on_polled decides
  c.viewer->pump(channels_.view(c.channel));
  if (c.viewer->failed() && c.viewer->state() != Viewer::State::draining) {
    log::warn("live", c.viewer->peer() + ": disconnecting from '" + c.viewer->channel() + "': " + c.viewer->failure());
    c.viewer->begin_drain(c.viewer->failure());
    rdma_disconnect(c.id.get());  // its DISCONNECTED event retires it
  }
}

void LiveTransport::on_polled() {
  {
    for (auto it = viewers_.begin(); it != viewers_.end();) {
      auto next = std::next(it);
      Connection& c = *it->second;
      if (!c.accept_data.empty()) {  // binding its windows: accept once bound, refuse if that failed
        const bool accepted = c.viewer->take_bound() && finish_accept(c);
        if (!accepted && (c.viewer->failed() || c.viewer->state() != Viewer::State::binding)) {
          log::error("live", c.viewer->peer() +
                                 ": cannot set up the connection: " + (c.viewer->failed() ? c.viewer->failure() : "the accept failed"));
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

void LiveTransport::accept(cm::Accepting a) {
  rdma::CmIdHandle& id = a.id;
  const std::shared_ptr<CatalogRegistration>& catalog = a.catalog;
  const std::uint32_t entry = a.admit.entry;
  const std::uint8_t depth = a.depth;
  const std::string& peer = a.peer;
  const proto::CatalogEntry& e = catalog->catalog.entries.at(entry);
  const auto found = channels_.find(e.name);
  if (!found) throw std::logic_error("catalog entry '" + e.name + "' is not a live channel of this server");
  const std::size_t index = *found;
  Device& device = *catalog->device;
  const Channels::Regions& regions = channels_.regions(index, device.context);
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
  if (device.binds_windows()) {
    // Windows over exactly the ring, the header and the catalog, bound to this viewer's own QP;
    // the accept goes out when the binds complete (finish_accept).
    Viewer::WindowPlan plan{{{regions.ring.get(), accept.movie}, {regions.header.get(), accept.index}, {catalog->mr.get(), accept.catalog}},
                            &device.rkeys,
                            depth,
                            kRnrRetry};
    c.viewer = std::make_unique<Viewer>(id.get(), device.pd.get(), device.limits, hub_, depths_, peer, e.name, &plan);
    const auto& w = c.viewer->window_regions();
    accept.movie = w[0];
    accept.index = w[1];
    accept.catalog = w[2];
    c.accept_data = proto::encode(accept);
    c.depth = depth;
  } else if (device.own_pds()) {
    // Its own PD with exactly the ring, the header and the catalog registered, and its QP there.
    Viewer::OwnPdPlan plan{ctx_.pinned,
                           {{regions.ring->addr, e.size},
                            {regions.header->addr, sizeof(proto::WireLiveHeader)},
                            {catalog->bytes.data(), catalog->bytes.length()}}};
    c.viewer = std::make_unique<Viewer>(id.get(), device.pd.get(), device.limits, hub_, depths_, peer, e.name, nullptr, &plan);
    const auto& own = c.viewer->window_regions();
    accept.movie = own[0];
    accept.index = own[1];
    accept.catalog = own[2];
    rdma::accept(id.get(), proto::encode(accept), depth, kRnrRetry);
  } else {
    c.viewer = std::make_unique<Viewer>(id.get(), device.pd.get(), device.limits, hub_, depths_, peer, e.name);
    rdma::accept(id.get(), proto::encode(accept), depth, kRnrRetry);
  }
  rdma_cm_id* raw = id.get();
  c.route = ctx_.routes.add(raw, c);
  c.id = std::move(id);
  c.grant = std::move(a.grant);
  if (const auto deadline = c.grant.deadline()) c.expiry = reactor_.at(*deadline, [this, raw] { expire(raw); });
  viewers_.emplace(raw, std::move(conn));
  log::info("server", "accept " + peer + ": " + server::describe(a.admit, catalog->catalog) + ", read depth " + std::to_string(depth) +
                          ", " + std::to_string(ctx_.clients()) + " connected");
  ctx_.metrics.count_accept("live");
  // Arm, then poll: the binds, or the viewer's first credit (it may Send as soon as the accept is
  // out), may have completed on a CQ that was never armed, and then no event would ever come. The
  // first viewer of a channel with no other viewers stayed without a notification this way.
  completions_.drain();
}

bool LiveTransport::finish_accept(Connection& c) {
  try {
    rdma::accept_with_qp(c.id.get(), c.viewer->qp(), c.accept_data, c.depth, kRnrRetry);
  } catch (const std::exception& e) {
    log::error("live", c.viewer->peer() + ": " + e.what());
    c.viewer->begin_drain("the accept failed");  // on_polled then refuses and retires it
    return false;
  }
  c.accept_data.clear();
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - c.since).count();
  log::info("live", c.viewer->peer() + ": accepted for '" + c.viewer->channel() + "' after binding 3 memory windows in " +
                        std::to_string(us) + " us");
  return true;
}

void LiveTransport::cut_off(rdma_cm_id* id) {
  auto it = viewers_.find(id);
  if (it == viewers_.end()) return;
  it->second->viewer->begin_drain("cut off");  // windows invalidated, QP in the error state: reads fail now
  rdma_disconnect(id);                         // its DISCONNECTED event retires it
}

void LiveTransport::cut_off_if(const std::function<std::optional<std::string>(const auth::Grant&)>& why) {
  std::vector<rdma_cm_id*> gone;
  for (const auto& [id, c] : viewers_)
    if (auto reason = why(c->grant)) {
      log::warn("auth", "disconnecting " + c->grant.terms().peer + ": " + *reason);
      gone.push_back(id);
    }
  for (rdma_cm_id* id : gone) cut_off(id);
}

void LiveTransport::begin_drain() {
  if (!viewers_.empty()) log::info("server", "disconnecting " + std::to_string(viewers_.size()) + " live viewer(s)");
  disconnect_all();
}

void LiveTransport::expire(rdma_cm_id* id) {
  auto it = viewers_.find(id);
  if (it == viewers_.end()) return;  // cannot happen: a retired viewer's timer is cancelled
  log::info("auth",
            "disconnecting " + it->second->viewer->peer() + ": its token expired (live channel '" + it->second->viewer->channel() + "')");
  cut_off(id);
}

void LiveTransport::on_cm_event(Connection& c, rdma::CmEvent& event) {
  auto it = viewers_.find(c.id.get());
  if (it == viewers_.end()) return;  // cannot happen: a retired viewer's route is gone
  switch (event.type()) {
    case RDMA_CM_EVENT_ESTABLISHED: log::debug("live", c.viewer->peer() + ": established"); return;
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT: {
      const std::string why = event.type_name();
      event.release();  // rdma_destroy_id waits for the acknowledgement; the event is gone from here
      return retire(it, why);
    }
    default: return;
  }
}

void LiveTransport::retire(std::map<rdma_cm_id*, std::unique_ptr<Connection>>::iterator it, const std::string& why) {
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
  std::unique_ptr<Connection> gone = std::move(it->second);
  viewers_.erase(it);
  draining_.add(std::move(gone));
}

void LiveTransport::disconnect_all() {
  for (auto& [id, c] : viewers_) rdma_disconnect(id);
}

void LiveTransport::count(ServerMetrics::ConnectionCounts& counts) const {
  for (std::size_t i = 0; i < channels_.size(); ++i) counts[{"live", channels_.name(i)}] = 0;  // every channel appears
  for (const auto& [id, c] : viewers_) ++counts[{"live", channels_.name(c->channel)}];
}

}  // namespace vod::server::live
