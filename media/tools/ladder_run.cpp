// SPDX-License-Identifier: LGPL-2.1-or-later
#include "ladder_run.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>

#include "vod/media/ladder.hpp"
#include "vod/media/mapped_file.hpp"
#include "vod/media/probe.hpp"

extern char** environ;

namespace vod::media {

namespace {

// Runs `argv` with its stdout on a pipe, calling `line` for each line it prints; its exit status.
int run_reading(const std::vector<std::string>& argv, const std::function<void(const std::string&)>& line) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe2: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (spawned != 0) {
    close(fds[0]);
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(spawned) + " (Debian: apt install ffmpeg)");
  }
  FILE* out = fdopen(fds[0], "r");
  char* buf = nullptr;
  std::size_t cap = 0;
  ssize_t n;
  while ((n = getline(&buf, &cap, out)) > 0) line(std::string(buf, static_cast<std::size_t>(n) - (buf[n - 1] == '\n')));
  std::free(buf);
  std::fclose(out);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int run_ladder(const std::string& input, const std::string& outdir, const std::vector<std::string>& labels, double keyframe_seconds) {
  const MediaInfo info = [&] {
    MappedFile file(input);
    return probe(file.bytes(), input);
  }();
  if (!info.is_media || info.width == 0)
    throw std::runtime_error(input + ": no video to make a ladder of" + (info.note.empty() ? "" : ": " + info.note));
  if (keyframe_seconds <= 0 || keyframe_seconds > 20) throw std::invalid_argument("--keyframe-seconds: between 0 and 20");
  LadderJob job;
  job.input = input;
  job.outdir = std::filesystem::path(outdir).lexically_normal().string();
  if (!job.outdir.empty() && job.outdir.back() == '/') job.outdir.pop_back();
  job.name = std::filesystem::path(job.outdir).filename().string();
  if (job.name.empty() || job.name == "." || job.name == "..")
    throw std::invalid_argument("OUTDIR must end in the title's name, such as 'Films/Ladder (2024)'");
  job.rungs = plan_ladder(labels, info.width, info.height);
  job.keyframe_seconds = keyframe_seconds;
  for (const auto& t : info.tracks) {
    if (t.kind == StreamTrack::Kind::audio) job.has_audio = true;
    if (t.kind == StreamTrack::Kind::subtitles && t.text) job.has_text_subtitles = true;
  }
  std::filesystem::create_directories(job.outdir);
  std::fprintf(stderr, "ladder: %s -> %s/%s - {", input.c_str(), job.outdir.c_str(), job.name.c_str());
  for (std::size_t i = 0; i < job.rungs.size(); ++i) std::fprintf(stderr, "%s%s", i ? "," : "", job.rungs[i].label.c_str());
  std::fprintf(stderr, "}.mp4, keyframes every %g s\n", keyframe_seconds);
  for (const auto& r : job.rungs) std::fprintf(stderr, "ladder:   %s: %ux%u, %u kb/s\n", r.label.c_str(), r.width, r.height, r.video_kbps);
  for (const auto& label : labels)
    if (std::none_of(job.rungs.begin(), job.rungs.end(), [&](const Rung& r) { return r.label == label; }))
      std::fprintf(stderr, "ladder:   %s left out: taller than the source's %u lines (no upscaling)\n", label.c_str(), info.height);
  const bool tty = isatty(STDERR_FILENO);
  int shown = -1;
  const int status = run_reading(ladder_command(job), [&](const std::string& line) {
    if (line.rfind("out_time_us=", 0) != 0 || info.duration_us == 0) return;
    const long long at = std::atoll(line.c_str() + 12);
    const int percent = static_cast<int>(std::clamp(100.0 * static_cast<double>(at) / static_cast<double>(info.duration_us), 0.0, 100.0));
    if (tty) std::fprintf(stderr, "\rladder: %3d%%", percent);
    else if (percent / 10 > shown / 10) std::fprintf(stderr, "ladder: %d%%\n", percent);
    shown = percent;
  });
  if (tty) std::fprintf(stderr, "\n");
  if (status != 0) {
    std::fprintf(stderr, "ladder: error: ffmpeg exited with status %d; partial files may be in %s\n", status, job.outdir.c_str());
    return 1;
  }
  std::fprintf(stderr, "ladder: done: %zu renditions in %s\n", job.rungs.size(), job.outdir.c_str());
  return 0;
}

}  // namespace vod::media
