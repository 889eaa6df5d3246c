// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-media ladder: probes the input, plans the ladder and runs ffmpeg (vod/media/ladder.hpp),
// showing its progress. Returns the exit code.
#pragma once

#include <string>
#include <vector>

namespace vod::media {

int run_ladder(const std::string& input, const std::string& outdir, const std::vector<std::string>& labels, double keyframe_seconds);

}  // namespace vod::media
