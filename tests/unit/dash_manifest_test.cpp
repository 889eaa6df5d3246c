// SPDX-License-Identifier: LGPL-2.1-or-later
#include <gtest/gtest.h>

#include "dash_manifest.hpp"

namespace vod::proxy::dash {
namespace {

TEST(DashManifest, TimelineTemplatesAndEscaping) {
  Presentation p;
  // The title's segments: 4 s, then 4.04 s; a rendition's own start 30 ms late does not matter.
  p.segments = {{{0, 10}, 0, 4'000'000, 0}, {{10, 10}, 4'000'000, 4'040'000, 0}};
  p.duration_us = 8'040'000;
  p.time_zero_us = 10'000'000;
  p.sets.push_back({AdaptationSet::Type::video,
                    "",
                    "",
                    true,
                    {{"720p", "/hls/A%20%26%20B/video-720p/", "avc1.64001f", 3000000, 1280, 720, 30000, 1001, 0}},
                    ""});
  p.sets.push_back({AdaptationSet::Type::text,
                    "sv",
                    "Svenska \"<&>\"",
                    false,
                    {{"subtitles-0", "", "wvtt", 256, 0, 0, 0, 0, 0}},
                    "/dash/A/subtitles-0.vtt"});
  const std::string m = manifest(p);
  EXPECT_NE(m.find("type=\"static\" mediaPresentationDuration=\"PT8.040S\""), std::string::npos) << m;
  EXPECT_NE(m.find("<AdaptationSet id=\"0\" contentType=\"video\" mimeType=\"video/mp4\" segmentAlignment=\"true\" startWithSAP=\"1\">"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("<Representation id=\"720p\" bandwidth=\"3000000\" codecs=\"avc1.64001f\" width=\"1280\" height=\"720\" "
                   "frameRate=\"30000/1001\">"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("initialization=\"/hls/A%20%26%20B/video-720p/init.mp4\" media=\"/hls/A%20%26%20B/video-720p/seg-$Number$.m4s\" "
                   "timescale=\"1000\" presentationTimeOffset=\"10000\" startNumber=\"0\""),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("<S t=\"10000\" d=\"4000\"/>\n          <S d=\"4040\"/>"), std::string::npos) << m;
  EXPECT_NE(m.find("contentType=\"text\" mimeType=\"text/vtt\" segmentAlignment=\"true\" lang=\"sv\">"), std::string::npos) << m;
  EXPECT_NE(m.find("<Label>Svenska &quot;&lt;&amp;&gt;&quot;</Label>"), std::string::npos) << m;
  EXPECT_NE(m.find("<BaseURL>/dash/A/subtitles-0.vtt</BaseURL>"), std::string::npos) << m;
  EXPECT_EQ(m.find("startWithSAP=\"1\" lang=\"sv\""), std::string::npos);  // text has no SAP
}

}  // namespace
}  // namespace vod::proxy::dash
