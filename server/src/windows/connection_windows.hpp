// SPDX-License-Identifier: LGPL-2.1-or-later
// Per-connection memory windows: with them, a client's accept carries rkeys that work on its own QP
// only and cover exactly the regions its grant names (docs/security.md, "Memory windows").
//
// The regions are registered for window binding only (no remote access through the MR's own rkey).
// For each connection the server allocates a type-2 window per region and binds it to the
// connection's QP with a bind work request, before the accept is sent; deallocating the windows
// (at disconnect or revocation) invalidates their rkeys at once.
//
// VoD connections run this as a WindowBinding (window_binding.hpp), the state machine from the
// QP's bring-up to the windows' end. ConnectionWindows is the part of it the live viewer still uses
// directly (it brings its QP up and takes the bind's completion itself): the same verbs
// (RdmaWindowVerbs, with the same test hook), without the states.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "windows/rkey_history.hpp"
#include "vod/protocol/region_descriptor.hpp"
#include "vod/rdma/handles.hpp"
#include "windows/rdma_window_verbs.hpp"
#include "windows/window_binding.hpp"

namespace vod::server::windows {

// The kind of a window bind's completion in the server's CompletionHub: rdma::WorkId{the
// connection's owner id, kBindKind, 0}.
inline constexpr std::uint8_t kBindKind = 4;

class ConnectionWindows {
 public:
  // Allocates a window per non-empty span and posts its bind to `qp` (REMOTE_READ, exactly the
  // span's bytes); only the last bind is signalled, with `wr_id` (an error in an earlier one is
  // reported as well). `qp` must be in RTS with room for spans.size() send work requests. Returns
  // the spans' regions with the windows' rkeys; empty ones stay empty. Throws rdma::RdmaError.
  std::vector<proto::RegionDescriptor> bind(ibv_pd* pd, ibv_qp* qp, std::span<const WindowSpan> spans, std::uint64_t wr_id,
                                            RkeyHistory& rkeys);
  // Deallocates the windows: their rkeys stop working at once.
  void invalidate() noexcept;
  std::size_t size() const noexcept { return windows_.size(); }

  // The test hook of RdmaWindowVerbs (vod-server --test-fail-binds N).
  static void fail_every(unsigned n) noexcept { RdmaWindowVerbs::fail_every(n); }

 private:
  std::optional<RdmaWindowVerbs> verbs_;
  std::vector<std::uint32_t> windows_;
};

}  // namespace vod::server::windows
