// SPDX-License-Identifier: LGPL-2.1-or-later
#include "windows/window_binding.hpp"

#include <exception>
#include <stdexcept>

namespace vod::server::windows {

const char* to_string(WindowBinding::State s) noexcept {
  switch (s) {
    case WindowBinding::State::idle: return "idle";
    case WindowBinding::State::binding: return "binding";
    case WindowBinding::State::bound: return "bound";
    case WindowBinding::State::failed: return "failed";
    case WindowBinding::State::invalidated: return "invalidated";
  }
  return "?";
}

std::vector<proto::RegionDescriptor> WindowBinding::start(std::span<const WindowSpan> spans, std::uint8_t responder_resources,
                                                          std::uint8_t rnr_retry, std::uint64_t wr_id) {
  if (state_ != State::idle) throw std::logic_error(std::string("window binding: start() while ") + to_string(state_));
  std::vector<proto::RegionDescriptor> out;
  try {
    verbs_.bring_up(responder_resources, rnr_retry);
    in_rts_ = true;
    std::vector<BindRequest> binds;
    out.reserve(spans.size());
    for (const WindowSpan& s : spans) {
      out.push_back(s.region);
      if (s.region.empty()) continue;
      const std::uint32_t w = verbs_.alloc_window();
      windows_.push_back(w);
      out.back().rkey = rkeys_.next(verbs_.window_rkey(w));
      binds.push_back({w, s.mr, s.region, out.back().rkey});
    }
    state_ = State::binding;
    if (binds.empty()) {
      state_ = State::bound;  // nothing to bind: nothing to wait for
      return out;
    }
    verbs_.post_binds(binds, wr_id);
    bind_outstanding_ = !binds.empty();
  } catch (const std::exception& e) {
    fail(e.what());
    throw;
  }
  return out;
}

WindowBinding::State WindowBinding::on_completion(ibv_wc_status status) {
  bind_outstanding_ = false;  // the chain's signalled last: every bind before it completed too
  if (state_ != State::binding) return state_;
  if (status == IBV_WC_SUCCESS) state_ = State::bound;
  else fail(std::string("binding its memory windows failed: ") + ibv_wc_status_str(status));
  return state_;
}

void WindowBinding::invalidate() noexcept {
  if (state_ == State::binding || state_ == State::idle) return fail("invalidated before its windows were bound");
  free_windows();
  if (state_ == State::bound) state_ = State::invalidated;
}

void WindowBinding::fail(std::string why) noexcept {
  free_windows();
  if (in_rts_) verbs_.to_error();
  if (failure_.empty()) failure_ = std::move(why);
  state_ = State::failed;
}

void WindowBinding::free_windows() noexcept {
  for (std::uint32_t w : windows_) verbs_.free_window(w);
  windows_.clear();
}

}  // namespace vod::server::windows
