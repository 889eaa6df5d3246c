// SPDX-License-Identifier: LGPL-2.1-or-later
// Where a recording of a live source begins and where it is cut into files (vod-server --live-record,
// --live-record-split): a pure decider, table-tested (tests/unit/live_recorder_test.cpp).
//
// A file holds bytes exactly as the source sent them, and should decode on its own. So a file
// begins with a keyframe, together with the run of tables (PAT, PMT, SDT...) the source sent just
// before it, as encoders and muxers do at every keyframe; the bytes before a stream's first
// keyframe are not recorded. A file is cut the same way, at the first keyframe once it is
// --live-record-split old. A stream that signals no keyframe is not held up for ever: after
// kNoKeyframeWait it begins, or is cut, at the next packet (and its tables).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace vod::server::live {

inline constexpr std::chrono::milliseconds kNoKeyframeWait{10'000};

struct SplitInput {
  bool recording = false;               // a file is open (else the recorder waits for its start)
  std::chrono::milliseconds age{};      // recording: since the file's first byte; else since waiting began
  std::chrono::milliseconds split{};    // --live-record-split; 0: files are cut only at an end of stream
  std::size_t pending = 0;              // bytes held in memory, not yet written, before this packet
  std::optional<std::size_t> tables{};  // where in them the run of tables just before this packet starts
  bool keyframe = false;                // this packet starts a keyframe's access unit
};

struct SplitDecision {
  enum class Action { none, begin, cut } action = Action::none;
  // begin: the held bytes before `at` are dropped and the file starts there; cut: they end the
  // current file and the next one starts there. `at` ≤ pending; this packet follows it.
  std::size_t at = 0;
  bool operator==(const SplitDecision&) const = default;
};

SplitDecision decide_split(const SplitInput& in) noexcept;

}  // namespace vod::server::live
