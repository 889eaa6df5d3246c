// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/media/ladder.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vod::media {

std::vector<Rung> plan_ladder(const std::vector<std::string>& labels, unsigned source_width, unsigned source_height) {
  if (source_width == 0 || source_height == 0) throw std::invalid_argument("the source has no video size");
  std::vector<Rung> out;
  for (const std::string& label : labels) {
    const bool digits = label.size() >= 4 && label.back() == 'p' &&
                        std::all_of(label.begin(), label.end() - 1, [](char c) { return c >= '0' && c <= '9'; });
    const unsigned height = digits && label.size() <= 5 ? static_cast<unsigned>(std::stoul(label.substr(0, label.size() - 1))) : 0;
    if (height < 100 || height > 4320)
      throw std::invalid_argument("rendition '" + label + "' is not a height from 100p to 4320p, such as 720p");
    if (height > source_height) continue;  // no upscaling
    if (std::any_of(out.begin(), out.end(), [&](const Rung& r) { return r.height == height; }))
      throw std::invalid_argument("rendition '" + label + "' is given twice");
    Rung r;
    r.label = label;
    r.height = height;
    r.width = static_cast<unsigned>(std::lround(static_cast<double>(source_width) * height / source_height / 2.0)) * 2;
    // 5000 kb/s for 1920x1080, scaled by pixels to the power 0.75 (smaller pictures need more bits
    // per pixel): 720p 2900, 480p 1500, 360p 950.
    r.video_kbps = static_cast<unsigned>(std::lround(5000.0 * std::pow(static_cast<double>(r.width) * height / (1920.0 * 1080.0), 0.75)));
    out.push_back(std::move(r));
  }
  if (out.empty())
    throw std::invalid_argument("every rendition asked for is taller than the source (" + std::to_string(source_height) + " lines)");
  std::sort(out.begin(), out.end(), [](const Rung& a, const Rung& b) { return a.height > b.height; });
  return out;
}

std::vector<std::string> ladder_command(const LadderJob& job) {
  std::vector<std::string> a = {"ffmpeg",    "-hide_banner", "-nostdin", "-nostats", "-loglevel", "error",
                                "-progress", "pipe:1",       "-y",       "-i",       job.input};
  std::string graph = "[0:v:0]split=" + std::to_string(job.rungs.size());
  for (std::size_t i = 0; i < job.rungs.size(); ++i) graph += "[s" + std::to_string(i) + "]";
  for (std::size_t i = 0; i < job.rungs.size(); ++i)
    graph += ";[s" + std::to_string(i) + "]scale=" + std::to_string(job.rungs[i].width) + ":" + std::to_string(job.rungs[i].height) +
             ",setsar=1[v" + std::to_string(i) + "]";
  a.insert(a.end(), {"-filter_complex", graph});
  char keyframes[64];
  std::snprintf(keyframes, sizeof keyframes, "expr:gte(t,n_forced*%g)", job.keyframe_seconds);
  for (std::size_t i = 0; i < job.rungs.size(); ++i) {
    const Rung& r = job.rungs[i];
    a.insert(a.end(), {"-map", "[v" + std::to_string(i) + "]"});
    if (job.has_audio) a.insert(a.end(), {"-map", "0:a"});
    if (job.has_text_subtitles) a.insert(a.end(), {"-map", "0:s?"});
    // Keyframes only where forced (no scene cuts, a GOP as long as x264 allows), closed GOPs.
    a.insert(a.end(), {"-c:v",
                       "libx264",
                       "-preset",
                       "veryfast",
                       "-profile:v",
                       "high",
                       "-pix_fmt",
                       "yuv420p",
                       "-b:v",
                       std::to_string(r.video_kbps) + "k",
                       "-maxrate",
                       std::to_string(r.video_kbps * 3 / 2) + "k",
                       "-bufsize",
                       std::to_string(r.video_kbps * 2) + "k",
                       "-force_key_frames",
                       keyframes,
                       "-sc_threshold",
                       "0",
                       "-x264-params",
                       "scenecut=0:open_gop=0:keyint=infinite"});
    if (job.has_audio) a.insert(a.end(), {"-c:a", "aac", "-b:a", "128k"});
    if (job.has_text_subtitles) a.insert(a.end(), {"-c:s", "mov_text"});
    a.insert(a.end(), {"-map_metadata", "0", "-movflags", "+faststart", job.outdir + "/" + job.name + " - " + r.label + ".mp4"});
  }
  return a;
}

}  // namespace vod::media
