// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ondemand/vod_transport.hpp"

#include <algorithm>
#include <stdexcept>

#include "vod/log.hpp"
#include "vod/protocol/private_data.hpp"
#include "vod/rdma/connection.hpp"
#include "windows/window_binding.hpp"

namespace vod::server::ondemand {

VodTransport::VodTransport(Context context) : ctx_(std::move(context)), failed_(ctx_.reactor, "server") {
  ctx_.completions.after_poll([this] { failed_.reap(); });  // a drain's last flush may have arrived
}

VodTransport::~VodTransport() {
  connections_.clear();
  failed_.clear();
}

VodConnection::Setup VodTransport::setup() noexcept {
  return {ctx_.completions.hub(), ctx_.routes, ctx_.reactor,   ctx_.cache, ctx_.slot_watchers, ctx_.pinned,
          channel_stats_,         binding_,    kMaxSlotWindows};
}

void VodTransport::accept(cm::Accepting a) {
  if (a.catalog->device->binds_windows() && binding_ >= kMaxBinding)
    throw std::runtime_error(std::to_string(binding_) + " clients are binding windows already");
  auto c = std::make_unique<VodConnection>(*this, a.catalog, a.admit, a.peer);
  c->set_up(a, setup());  // throws before it takes the id: the dispatcher rejects it
  VodConnection& kept = *c;
  connections_.emplace(c.get(), std::move(c));
  if (kept.state() != State::accepting) return;  // binding: accepted() once the windows are bound
  log::info("server", "accept " + kept.peer() + ": " + kept.what() + ", generation " + std::to_string(a.catalog->catalog.generation) +
                          ", read depth " + std::to_string(kept.depth()) + " (asked " + std::to_string(a.conn.responder_resources) + "), " +
                          std::to_string(ctx_.clients()) + " connected");
  ctx_.metrics.count_accept(kept.kind());
}

void VodTransport::accepted(VodConnection& c) {
  ctx_.metrics.count_accept(c.kind());
  if (ctx_.changed) ctx_.changed();
}

void VodTransport::fail(VodConnection& c, const std::string& why) {
  log::error("server", "cannot set up the connection from " + c.peer() + ": " + why);
  ctx_.metrics.count_reject(proto::RejectCode::internal_error);
  rdma::reject(c.id(), proto::encode_reject(proto::RejectCode::internal_error, "the server could not set up the connection"));
  destroy(c);
}

void VodTransport::destroy(VodConnection& c) {
  auto node = connections_.extract(&c);
  if (node.empty()) return;
  std::unique_ptr<VodConnection> gone = std::move(node.mapped());
  if (gone->retire()) failed_.add(std::move(gone));  // else nothing of its QP can complete any more: it goes now
}

void VodTransport::cut_off_if(const std::function<std::optional<std::string>(const auth::Grant&)>& why) {
  std::vector<std::pair<VodConnection*, std::string>> gone;
  for (const auto& [key, c] : connections_)
    if (auto reason = why(c->grant())) gone.emplace_back(c.get(), std::move(*reason));
  for (auto& [c, reason] : gone) {
    log::warn("auth", "disconnecting " + c->peer() + ": " + reason);
    c->cut_off(reason);  // may fail it (not accepted yet): it leaves connections_, the others stay
  }
}

void VodTransport::cut_off_all() {
  std::vector<VodConnection*> all;
  for (const auto& [key, c] : connections_) all.push_back(c.get());
  for (VodConnection* c : all) c->cut_off("the server is stopping");
  connections_.clear();
}

void VodTransport::count(ServerMetrics::ConnectionCounts& counts) const {
  for (const auto& [key, c] : connections_) ++counts[{c->kind(), c->movie()}];
}

}  // namespace vod::server::ondemand
