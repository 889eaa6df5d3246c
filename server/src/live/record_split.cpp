// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/record_split.hpp"

namespace vod::server::live {

SplitDecision decide_split(const SplitInput& in) noexcept {
  using Action = SplitDecision::Action;
  const std::size_t here = in.tables.value_or(in.pending);  // the tables that lead into this packet go with it
  if (!in.recording) {
    if (in.keyframe || in.age >= kNoKeyframeWait) return {Action::begin, here};
    return {};
  }
  if (in.split.count() <= 0 || in.age < in.split) return {};
  if (in.keyframe || in.age >= in.split + kNoKeyframeWait) return {Action::cut, here};
  return {};
}

}  // namespace vod::server::live
