// SPDX-License-Identifier: LGPL-2.1-or-later
#include "windows/connection_windows.hpp"

namespace vod::server::windows {

std::vector<proto::RegionDescriptor> ConnectionWindows::bind(ibv_pd* pd, ibv_qp* qp, std::span<const WindowSpan> spans, std::uint64_t wr_id,
                                                             RkeyHistory& rkeys) {
  verbs_.emplace(nullptr, pd, qp);  // its owner brought the QP up
  std::vector<proto::RegionDescriptor> out;
  std::vector<BindRequest> binds;
  out.reserve(spans.size());
  for (const WindowSpan& s : spans) {
    out.push_back(s.region);
    if (s.region.empty()) continue;
    const std::uint32_t w = verbs_->alloc_window();
    windows_.push_back(w);
    out.back().rkey = rkeys.next(verbs_->window_rkey(w));
    binds.push_back({w, s.mr, s.region, out.back().rkey});
  }
  verbs_->post_binds(binds, wr_id);
  return out;
}

void ConnectionWindows::invalidate() noexcept {
  if (verbs_)
    for (std::uint32_t w : windows_) verbs_->free_window(w);
  windows_.clear();
}

}  // namespace vod::server::windows
