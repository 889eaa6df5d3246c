// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ondemand/vod_connection.hpp"

#include <cstdio>
#include <exception>

#include "ondemand/vod_transport.hpp"
#include "vod/log.hpp"
#include "vod/rdma/connection.hpp"
#include "windows/window_binding.hpp"

namespace vod::server::ondemand {

namespace {
std::string seconds_since(std::chrono::steady_clock::time_point t) {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", s);
  return buf;
}
}  // namespace

VodConnection::VodConnection(VodTransport& transport, std::shared_ptr<CatalogRegistration> catalog, const Admit& admit, std::string peer)
    : transport_(transport), catalog_(std::move(catalog)), peer_(std::move(peer)), since_(std::chrono::steady_clock::now()) {
  const bool movie = admit.kind == Admit::Kind::movie;
  what_ = describe(admit, catalog_->catalog);
  kind_ = movie ? "movie" : "catalog";
  if (movie) movie_ = catalog_->catalog.entries.at(admit.entry).name;
}

void VodConnection::handle(Event e, const std::string& why) {
  const Step step = next(state_, e);
  log::debug("server",
             peer_ + ": " + to_string(state_) + " + " + to_string(e) + " -> " + to_string(step.next) + " (" + to_string(step.action) + ")");
  state_ = step.next;
  switch (step.action) {
    case Action::none: return;
    case Action::send_accept: return send_accept();
    case Action::reject: return transport_.fail(*this, why);  // `this` may be gone
    case Action::disconnect: return disconnect();
    case Action::destroy: return transport_.destroy(*this);  // `this` is gone
  }
}

void VodConnection::send_accept() {
  try {
    rdma::accept_with_qp(id_.get(), own_qp_.get(), accept_data_, depth_);
  } catch (const std::exception& e) {
    return handle(Event::accept_failed, e.what());
  }
  accept_data_.clear();
  binding_.reset();
  // Its binds have completed (the signalled last one after the others); without a segment channel
  // nothing more is posted.
  if (!channel_) cq_.reset();
  const auto bind_us = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - since_).count();
  log::info("server", "accept " + peer_ + ": " + what_ + ", generation " + std::to_string(catalog_->catalog.generation) + ", read depth " +
                          std::to_string(depth_) + ", " + std::to_string(windows_ ? windows_->windows() : 0) + " memory windows bound in " +
                          std::to_string(bind_us) + " us, " + std::to_string(transport_.ctx_.clients()) + " connected");
  transport_.accepted(*this);
}

void VodConnection::disconnect() noexcept {
  if (channel_) channel_->close();
  if (windows_) windows_->invalidate();  // their rkeys fail from now on, before any message
  if (own_pd_) own_pd_->invalidate();
  if (own_qp_) rdma::move_to_error(own_qp_.get());
  rdma_disconnect(id_.get());  // an rdma_cm QP goes to error here; the last CM event destroys the rest
}

void VodConnection::cut_off(const std::string& why) { handle(Event::cut_off, why); }

void VodConnection::on_completion(const ibv_wc& wc, rdma::WorkId wid) {
  const auto kind = static_cast<VodWork>(wid.kind);
  if ((kind == VodWork::recv || kind == VodWork::send || kind == VodWork::slot_bind) && channel_) {
    if (state_ == State::draining || state_ == State::gone) {
      channel_->on_completion(wc, kind, wid.index);  // closed: it only counts the flush (its transport reaps it after this poll)
      return;
    }
    const std::string why = channel_->on_completion(wc, kind, wid.index);
    if (!why.empty()) {
      log::warn("server", peer_ + ": " + why + "; disconnecting it");
      cut_off(why);  // `this` may be gone
    }
    return;
  }
  if (kind != VodWork::bind || !windows_) {
    log::warn("server", peer_ + ": unexpected completion (kind " + std::to_string(wid.kind) + ", " + ibv_wc_status_str(wc.status) + ")");
    return;
  }
  const auto after = windows_->on_completion(wc.status);  // counted in any state: a drain waits for it
  if (state_ != State::binding) return;                   // a late one: it failed or went meanwhile
  switch (after) {
    case windows::WindowBinding::State::bound: return handle(Event::bound);
    case windows::WindowBinding::State::failed: return handle(Event::bind_failed, windows_->failure());
    default: return;
  }
}

void VodConnection::on_cm_event(rdma::CmEvent& event) {
  switch (event.type()) {
    case RDMA_CM_EVENT_ESTABLISHED: log::debug("server", "established " + peer_); return handle(Event::established);
    case RDMA_CM_EVENT_DISCONNECTED:
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
      log::info("server", "disconnect " + peer_ + ": " + what_ + " after " + seconds_since(since_) + " (" + event.type_name() + "), " +
                              std::to_string(transport_.ctx_.clients() - 1) + " connected");
      event.release();  // rdma_destroy_id waits for the acknowledgement: the connection and its id go next
      return handle(Event::peer_gone);
    default: log::debug("server", std::string("event ") + event.type_name() + " for " + peer_);
  }
}

}  // namespace vod::server::ondemand
