// What ffprobe says about a file: the reference the media tests compare the index against.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace vod::test {

// The generated test medium NAME (ctest sets VOD_TEST_MEDIA_DIR: tests/media/CMakeLists.txt).
inline std::string media_path(const std::string& name) {
  const char* d = std::getenv("VOD_TEST_MEDIA_DIR");
  if (!d) throw std::runtime_error("VOD_TEST_MEDIA_DIR is not set (ctest sets it; see tests/media/CMakeLists.txt)");
  return std::string(d) + "/" + name;
}

// Runs a shell command and returns its standard output; throws when it fails.
inline std::string run(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) throw std::runtime_error("popen failed: " + command);
  std::string out;
  char buf[4096];
  while (std::size_t n = fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  const int status = pclose(pipe.release());
  if (status != 0) throw std::runtime_error("command failed (" + std::to_string(status) + "): " + command);
  return out;
}

inline std::int64_t micros(const std::string& seconds) { return std::llround(std::stod(seconds) * 1e6); }

struct ReferenceKeyframe {
  std::int64_t pts_us;  // absolute, as ffprobe prints it
  std::uint64_t pos;
};

// Keyframe packets of the first video stream, in file order, with a known byte position.
inline std::vector<ReferenceKeyframe> ffprobe_keyframes(const std::string& path) {
  const std::string out = run("ffprobe -v error -select_streams v:0 -show_entries packet=pts_time,pos,flags -of csv=p=0 '" + path + "'");
  std::vector<ReferenceKeyframe> keys;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string pts, pos, flags;
    std::getline(fields, pts, ',');
    std::getline(fields, pos, ',');
    std::getline(fields, flags, ',');
    if (flags.find('K') == std::string::npos || pos == "N/A" || pts == "N/A") continue;
    keys.push_back({micros(pts), std::stoull(pos)});
  }
  return keys;
}

inline std::int64_t ffprobe_start_us(const std::string& path) {
  const std::string out = run("ffprobe -v error -show_entries format=start_time -of csv=p=0 '" + path + "'");
  return out.empty() || out.rfind("N/A", 0) == 0 ? 0 : micros(out);
}

}  // namespace vod::test
