// SPDX-License-Identifier: LGPL-2.1-or-later
// VodServer and its origin (--origin): the first listing, and the listings after start on their
// thread (origin/origin_rescanner.hpp).
#include <utility>

#include "vod/log.hpp"
#include "vod_server.hpp"

namespace vod::server {

Library VodServer::first_scan() {
  if (config_.origin.empty()) return scan_library(config_.media_dir, 1, nullptr, library_options_);
  origin_scans_ = std::make_unique<origin::OriginRescanner>(
      reactor_, [this](std::optional<Library> library, const std::string& error) { origin_scanned(std::move(library), error); });
  try {
    Library first = scan_library({}, 1, nullptr, library_options_);
    rescan_soon(std::chrono::seconds(config_.origin_rescan_s));
    return first;
  } catch (const std::exception& e) {
    log::error("origin", std::string("cannot list the origin: ") + e.what() + "; serving no movie until it can be (trying again in 5 s)");
    rescan_soon(std::chrono::seconds(5));
    return Library{1, {}, {}, {}};
  }
}

void VodServer::rescan_soon(std::chrono::seconds after) {
  if (!origin_scans_ || draining_ || after.count() == 0) return;
  const auto when = std::chrono::steady_clock::now() + after;
  if (origin_timer_.armed() && origin_due_ <= when) return;
  origin_due_ = when;
  origin_timer_ = reactor_.at(when, [this] {
    if (origin_scans_->busy()) {  // the one under way may have listed the origin before what asked for this
      origin_again_ = true;
      return;
    }
    Library previous = library_;  // a copy of the list: the thread reads it while the loop goes on
    origin_scans_->start(
        [this, previous = std::move(previous)] { return scan_library({}, previous.generation + 1, &previous, library_options_); });
  });
}

void VodServer::origin_scanned(std::optional<Library> library, const std::string& error) {
  if (!library) {
    log::error("origin", "listing the origin failed, keeping generation " + std::to_string(library_.generation) + ": " + error);
    origin_again_ = false;
    rescan_soon(std::chrono::seconds(5));
    return;
  }
  library->generation = library_.generation + 1;  // one may have been published meanwhile
  // Published only when something changed: the same movies, in order, are the same generation.
  if (library->movies != library_.movies) {
    try {
      publish_generation(std::move(*library));
    } catch (const std::exception& e) {
      log::error("origin", std::string("cannot publish the origin's new listing: ") + e.what());
    }
  }
  rescan_soon(std::exchange(origin_again_, false) ? std::chrono::seconds(1) : std::chrono::seconds(config_.origin_rescan_s));
}

}  // namespace vod::server
