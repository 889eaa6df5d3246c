// SPDX-License-Identifier: LGPL-2.1-or-later
// Where a process's first open spends its time. With VOD_STARTUP_TRACE=1 in the environment, the
// connector (device check, channel, resolution, PD/CQ/QP, rdma_connect, while_connecting, the CM
// events) and libvodclient (the ring, the head Read posted and landed, the first request served)
// each mark a step; the marks are kept in memory and written to stderr in one go when the first
// request has been served (finish), or at exit. Only the first open of the process is traced: the
// first 12 marks after finish() (what came right after the first bytes) are written at exit, later
// ones are ignored. Without the variable a mark is one test of a cached flag.
//
//   vod-startup[PID]: +   12345 us  (+  1234) rdma_connect returned
//
// Each line: the time since the first mark, the time since the mark before, the step.
#pragma once

#include <string_view>

namespace vod::rdma::startup_trace {

// True when VOD_STARTUP_TRACE is set, non-empty and not "0" (read once).
bool enabled() noexcept;
// Records that `step` has just ended. Thread-safe.
void mark(std::string_view step) noexcept;
// Records the last step of the open and writes every mark to stderr; of the marks after it, the
// first 12 are written at exit.
void finish(std::string_view step) noexcept;

}  // namespace vod::rdma::startup_trace
