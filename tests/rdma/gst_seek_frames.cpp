// SPDX-License-Identifier: LGPL-2.1-or-later
// gst_seek_frames FILE [PER_SEGMENT]: the expectation rdma_vod_gst compares rdmasrc with, made
// natively with filesrc before the guest starts (tests/media/make-expectations.sh). Prints one line
// per segment (the start, then each seek target of gst_frames.hpp): the MD5s of its first
// PER_SEGMENT (25) decoded video frames, space-separated.
#include <cstdio>
#include <string>

#include "gst_frames.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: gst_seek_frames FILE [PER_SEGMENT]\n");
    return 2;
  }
  gst_init(nullptr, nullptr);
  const std::size_t per_segment = argc == 3 ? std::stoul(argv[2]) : 25;
  const auto got = vod::test::frames_after_seeks(std::string("filesrc location=\"") + argv[1] + "\"", per_segment);
  if (!got.problem.empty()) {
    std::fprintf(stderr, "gst_seek_frames: %s\n", got.problem.c_str());
    return 1;
  }
  for (const auto& segment : got.segments) {
    std::string line;
    for (const auto& md5 : segment) line += (line.empty() ? "" : " ") + md5;
    std::printf("%s\n", line.c_str());
  }
  return 0;
}
