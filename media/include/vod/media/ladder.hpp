// SPDX-License-Identifier: LGPL-2.1-or-later
// `vod-media ladder`: a ladder of renditions made for adaptive bitrate from one movie, in the title
// convention the server groups (titles/title_grouping.hpp): OUTDIR/NAME - LABEL.mp4, NAME being
// OUTDIR's own name. The encoding is ffmpeg's (its command line, run once: one decode, split to
// every rendition), with keyframes forced at the same times in every rendition, no scene-cut
// keyframes and closed GOPs, so that every segment boundary is a keyframe in each. Audio and text
// subtitle streams are kept, with their languages. The plan and the command are pure functions
// (tests/unit/ladder_test.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vod::media {

struct Rung {
  std::string label;  // "720p"
  unsigned width = 0, height = 0;
  unsigned video_kbps = 0;  // H.264's target (the maximum is 1.5x, the buffer 2x)
  bool operator==(const Rung&) const = default;
};

// The rungs of `labels` ("1080p", "720p", ...: a height and 'p') for a source of width x height:
// the width keeps the source's aspect ratio, rounded to even; rungs taller than the source are left
// out (no upscaling), and the rates follow the height (a common ladder: 1080p 5000 kb/s, 720p 2800,
// 480p 1400, 360p 800, scaled by the pixel count for others). Throws std::invalid_argument for a
// label that is not HEIGHTp, a height over 4320, or when no rung is left.
std::vector<Rung> plan_ladder(const std::vector<std::string>& labels, unsigned source_width, unsigned source_height);

struct LadderJob {
  std::string input, outdir, name;  // the files are outdir/"name - label.mp4"
  std::vector<Rung> rungs;
  double keyframe_seconds = 2.0;  // every rendition has a keyframe at each multiple of this
  bool has_audio = false, has_text_subtitles = false;
};

// ffmpeg's argument vector (argv[0] "ffmpeg"), with progress as key=value lines on stdout.
std::vector<std::string> ladder_command(const LadderJob& job);

}  // namespace vod::media
