// SPDX-License-Identifier: LGPL-2.1-or-later
// One connection's memory windows, from its QP's bring-up to the windows' end, as one state machine
// shared by the VoD and live paths (docs/security.md, "Memory windows"):
//
//   idle --start()--> binding --the signalled bind succeeded--> bound --invalidate()--> invalidated
//     |                  |
//     |                  `--an error or flush completion--> failed
//     `--start() throws (bring-up, a window, the post)--> failed
//
//   binding      the QP is in RTS (the connection's own, not rdma_cm's), a type-2 window is allocated
//                per non-empty region and the binds are posted, the last one signalled; the accept
//                waits for its completion.
//   failed       every window freed; the QP moved to the error state if it had reached RTS (so its
//                owner drains it before destroying it, as it does any QP). failure() says why.
//   invalidated  the windows freed: their rkeys fail from now on (a disconnect or a cut-off).
//
// The verbs are behind WindowVerbs, so the state machine runs against a stub in the unit tests
// (tests/unit/window_binding_test.cpp) and against rdma-core in RdmaWindowVerbs.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "vod/protocol/region_descriptor.hpp"
#include "windows/rkey_history.hpp"

namespace vod::server::windows {

// The kind of a window bind's completion in the server's CompletionHub: rdma::WorkId{the
// connection's owner id, kBindKind, 0}, for VoD connections and live viewers alike.
inline constexpr std::uint8_t kBindKind = 4;

// A region to expose through a window: `region` lies inside `mr`, which allows binding.
struct WindowSpan {
  ibv_mr* mr = nullptr;
  proto::RegionDescriptor region;
};

// One bind: window `window` (a WindowVerbs handle) over `region` of `mr`, with `rkey`.
struct BindRequest {
  std::uint32_t window = 0;
  ibv_mr* mr = nullptr;
  proto::RegionDescriptor region;
  std::uint32_t rkey = 0;
};

// The device side of one connection's binding. A stub in tests.
class WindowVerbs {
 public:
  virtual ~WindowVerbs() = default;
  // The QP through INIT, RTR and RTS with rdma_cm's attributes (bring_up_passive_qp). Throws.
  virtual void bring_up(std::uint8_t responder_resources, std::uint8_t rnr_retry) = 0;
  // A type-2 window on the connection's PD; returns its handle. Throws.
  virtual std::uint32_t alloc_window() = 0;
  virtual std::uint32_t window_rkey(std::uint32_t window) const = 0;
  // Deallocates it: its rkey fails from now on.
  virtual void free_window(std::uint32_t window) noexcept = 0;
  // Posts the binds (REMOTE_READ, exactly each region) in one chain, only the last signalled, with
  // `wr_id`. Throws.
  virtual void post_binds(std::span<const BindRequest> binds, std::uint64_t wr_id) = 0;
  virtual void to_error() noexcept = 0;
};

class WindowBinding {
 public:
  enum class State { idle, binding, bound, failed, invalidated };

  WindowBinding(WindowVerbs& verbs, RkeyHistory& rkeys) noexcept : verbs_(verbs), rkeys_(rkeys) {}
  WindowBinding(const WindowBinding&) = delete;
  WindowBinding& operator=(const WindowBinding&) = delete;
  ~WindowBinding() { free_windows(); }

  // Brings the QP up and posts a bind per non-empty span (rkeys from `rkeys`, never one handed out
  // lately). Returns the spans' regions with the windows' rkeys (empty ones stay empty). From idle
  // only. On failure: state failed (windows freed, QP to error if it reached RTS), then rethrows.
  std::vector<proto::RegionDescriptor> start(std::span<const WindowSpan> spans, std::uint8_t responder_resources, std::uint8_t rnr_retry,
                                             std::uint64_t wr_id);
  // The signalled bind's completion. Returns the state after it; in any state but binding it is
  // ignored (a late completion).
  State on_completion(ibv_wc_status status);
  // Frees the windows (their rkeys fail from now on). A binding that is not bound yet fails.
  void invalidate() noexcept;

  State state() const noexcept { return state_; }
  const std::string& failure() const noexcept { return failure_; }
  std::size_t windows() const noexcept { return windows_.size(); }
  // The chain of binds is posted and its signalled last has not completed (nor flushed): what a
  // drain of the QP waits for (cm::QpDrain).
  bool bind_outstanding() const noexcept { return bind_outstanding_; }

 private:
  void fail(std::string why) noexcept;
  void free_windows() noexcept;

  WindowVerbs& verbs_;
  RkeyHistory& rkeys_;
  State state_ = State::idle;
  bool in_rts_ = false;
  bool bind_outstanding_ = false;
  std::vector<std::uint32_t> windows_;
  std::string failure_;
};

const char* to_string(WindowBinding::State s) noexcept;

}  // namespace vod::server::windows
