// SPDX-License-Identifier: LGPL-2.1-or-later
// Subtitles are movie bytes, so hostile: a sidecar file read as SRT or WebVTT, a text stream's
// packets. Whatever arrives, read_cues fails with SubtitleError or gives cues in start order whose
// text WebVTT can carry (no blank line, no "-->", no carriage return), and the segment made of them
// is one WebVTT file.
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>

#include "vod/media/subtitles.hpp"

namespace {

void check_text(const std::string& t) {
  if (t.find("\n\n") != std::string::npos || t.find("-->") != std::string::npos || t.find('\r') != std::string::npos) std::abort();
  if (!t.empty() && (t.front() == '\n' || t.back() == '\n')) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace vod::media;
  const std::span<const std::uint8_t> input(data, size);
  for (const char* codec : {"subrip", "mov_text", "webvtt"}) check_text(cue_text(codec, input));
  try {
    const auto cues = read_cues(
        size,
        [&](std::uint64_t off, std::span<std::uint8_t> dest) -> std::size_t {
          if (off >= size) return 0;
          const std::size_t n = std::min<std::size_t>(dest.size(), size - off);
          std::memcpy(dest.data(), data + off, n);
          return n;
        },
        -1, std::chrono::milliseconds(2000), 1000);
    for (std::size_t i = 0; i < cues.size(); ++i) {
      check_text(cues[i].text);
      if (cues[i].text.empty() || cues[i].end_us <= cues[i].start_us || (i && cues[i].start_us < cues[i - 1].start_us)) std::abort();
    }
    const std::string segment = webvtt_segment(cues, 0, ~0ull, 900000);
    if (segment.rfind("WEBVTT\n", 0) != 0) std::abort();
  } catch (const SubtitleError&) {}
  return 0;
}
