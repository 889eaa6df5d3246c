// SPDX-License-Identifier: LGPL-2.1-or-later
// read-latency --fresh N: what a fresh process's first open costs, from the open call to the
// first 16 KiB in hand, for libvodclient against a bare raw-verbs program doing the same, in
// the same run. The parent execs itself N times per path (--fresh-child bare|vod), alternating
// which path goes first in each pair, and each child times its own open:
//   bare  rdma_cm channel and id, the address (numeric: inet_pton), address and route
//         resolution, PD, a CQ of 16, the QP, a 64 KiB MR, rdma_connect with the movie's
//         connect request, ESTABLISHED, one Read of --size bytes at the movie's start,
//         busy-polled: the least a program can do to read a movie's first bytes over rdma_cm
//   vod   client::Session(rdma://host:port/name) with the default options (as vod-client), then
//         pread(0, --size bytes)
// With VOD_STARTUP_TRACE=1 each child prints where its open went (vod/rdma/startup_trace.hpp): the bare
// one its own steps, the vod one libvodclient's.
#pragma once

#include <cstdint>
#include <string>

namespace vod::bench {

struct FreshOptions {
  std::string host;
  std::uint16_t port = 0;
  std::string name;
  std::uint32_t size = 16384;
  unsigned count = 0;   // children per path
  unsigned gap_ms = 0;  // between two children
};

// The parent: runs the children and prints one line,
// READLAT_FRESH size=... count=... bare_p50_us=... vod_p50_us=... ratio=... (and p90s, and the
// same from spawn to the child's answer, process start included: *_exec_p50_us).
int run_fresh(const FreshOptions& o);

// A child: opens by `path` ("bare" or "vod"), reads, prints "FRESH_CHILD path=... open_us=...".
int run_fresh_child(const FreshOptions& o, const std::string& path);

}  // namespace vod::bench
