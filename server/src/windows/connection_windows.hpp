// SPDX-License-Identifier: LGPL-2.1-or-later
// Per-connection memory windows: with them, a client's accept carries rkeys that work on its own QP
// only and cover exactly the regions its grant names (docs/security.md, "Memory windows").
//
// The regions are registered for window binding only (no remote access through the MR's own rkey).
// For each connection the server allocates a type-2 window per region and binds it to the
// connection's QP with a bind work request, before the accept is sent; deallocating the windows
// (at disconnect or revocation) invalidates their rkeys at once.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <span>
#include <vector>

#include "rkey_history.hpp"
#include "vod/protocol/region_descriptor.hpp"
#include "vod/rdma/handles.hpp"

namespace vod::server::windows {

// The kind of a window bind's completion in the server's CompletionHub: rdma::WorkId{the
// connection's owner id, kBindKind, 0}.
inline constexpr std::uint8_t kBindKind = 4;

// A region to expose through a window: `region` lies inside `mr`, which allows binding.
struct WindowSpan {
  ibv_mr* mr = nullptr;
  proto::RegionDescriptor region;
};

class ConnectionWindows {
 public:
  // Allocates a window per non-empty span and posts its bind to `qp` (REMOTE_READ, exactly the
  // span's bytes); only the last bind is signalled, with `wr_id` (an error in an earlier one is
  // reported as well). `qp` must be in RTS with room for spans.size() send work requests. Returns
  // the spans' regions with the windows' rkeys; empty ones stay empty. Throws rdma::RdmaError.
  std::vector<proto::RegionDescriptor> bind(ibv_pd* pd, ibv_qp* qp, std::span<const WindowSpan> spans, std::uint64_t wr_id,
                                            RkeyHistory& rkeys);
  // Deallocates the windows: their rkeys stop working at once.
  void invalidate() noexcept { windows_.clear(); }
  std::size_t size() const noexcept { return windows_.size(); }

  // A test hook (vod-server --test-fail-binds N): every Nth bind() of the process asks the device for
  // a window longer than its region, which the device refuses with a failed completion, so tests
  // reach the bind-failure paths on real rdma-core. 0: off.
  static void fail_every(unsigned n) noexcept { fail_every_ = n; }

 private:
  static inline unsigned fail_every_ = 0;  // the test hook's setting, and binds counted for it
  static inline unsigned binds_ = 0;
  std::vector<rdma::MemoryWindow> windows_;
};

}  // namespace vod::server::windows
