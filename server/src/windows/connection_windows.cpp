// SPDX-License-Identifier: LGPL-2.1-or-later
#include "connection_windows.hpp"

#include "vod/rdma/error.hpp"

namespace vod::server::windows {

std::vector<proto::RegionDescriptor> ConnectionWindows::bind(ibv_pd* pd, ibv_qp* qp, std::span<const WindowSpan> spans, std::uint64_t wr_id,
                                                             RkeyHistory& rkeys) {
  std::vector<proto::RegionDescriptor> out;
  std::vector<ibv_send_wr> wrs;
  out.reserve(spans.size());
  wrs.reserve(spans.size());
  for (const WindowSpan& s : spans) {
    out.push_back(s.region);
    if (s.region.empty()) continue;
    windows_.push_back(rdma::alloc_type2_window(pd));
    ibv_send_wr wr{};
    wr.opcode = IBV_WR_BIND_MW;
    wr.bind_mw.mw = windows_.back().get();
    wr.bind_mw.rkey = rkeys.next(windows_.back()->rkey);
    wr.bind_mw.bind_info.mr = s.mr;
    wr.bind_mw.bind_info.addr = s.region.addr;
    wr.bind_mw.bind_info.length = s.region.length;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
    out.back().rkey = wr.bind_mw.rkey;
    wrs.push_back(wr);
  }
  if (wrs.empty()) return out;
  if (fail_every_ && ++binds_ % fail_every_ == 0) wrs.back().bind_mw.bind_info.length += wrs.back().bind_mw.bind_info.mr->length;
  for (std::size_t i = 0; i + 1 < wrs.size(); ++i) wrs[i].next = &wrs[i + 1];
  wrs.back().wr_id = wr_id;
  wrs.back().send_flags = IBV_SEND_SIGNALED;
  ibv_send_wr* bad = nullptr;
  if (int err = ibv_post_send(qp, wrs.data(), &bad))
    rdma::throw_error("ibv_post_send", err, rdma::device_name(pd->context), "posting " + std::to_string(wrs.size()) + " memory window binds");
  return out;
}

}  // namespace vod::server::windows
