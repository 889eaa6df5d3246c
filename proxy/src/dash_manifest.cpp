// SPDX-License-Identifier: LGPL-2.1-or-later
#include "dash_manifest.hpp"

#include <cstdio>

namespace vod::proxy::dash {

namespace {

// Attribute text: XML's five specials escaped; control characters (none reach here from the
// catalog, whose text is checked) left out.
std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20) out += c;
    }
  }
  return out;
}

// An xs:duration in seconds with milliseconds: "PT12.040S".
std::string duration(std::uint64_t us) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "PT%llu.%03lluS", static_cast<unsigned long long>(us / 1'000'000),
                static_cast<unsigned long long>(us / 1000 % 1000));
  return buf;
}

std::string attr(const char* name, const std::string& value) { return std::string(" ") + name + "=\"" + escaped(value) + "\""; }
std::string attr(const char* name, std::uint64_t value) { return attr(name, std::to_string(value)); }

// Milliseconds: the timeline's timescale. Every segment's start is the title's; its duration runs
// to the next start, so the timeline has no gap whatever the rounding.
std::string timeline(const Presentation& p) {
  std::string out = "        <SegmentTimeline>\n";
  for (std::size_t i = 0; i < p.segments.size(); ++i) {
    const std::uint64_t start = (p.segments[i].start_us + p.time_zero_us) / 1000;
    const std::uint64_t end = i + 1 < p.segments.size() ? (p.segments[i + 1].start_us + p.time_zero_us) / 1000
                                                        : (p.segments[i].start_us + p.segments[i].extinf_us() + p.time_zero_us) / 1000;
    out += "          <S" + (i == 0 ? attr("t", start) : std::string()) + attr("d", end > start ? end - start : 1) + "/>\n";
  }
  return out + "        </SegmentTimeline>\n";
}

}  // namespace

std::string manifest(const Presentation& p) {
  std::string out =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" profiles=\"urn:mpeg:dash:profile:isoff-live:2011\" type=\"static\"" +
      attr("mediaPresentationDuration", duration(p.duration_us)) + attr("minBufferTime", "PT2S") + ">\n";
  out += "  <Period id=\"0\" start=\"PT0S\">\n";
  const std::string template_attrs =
      attr("timescale", 1000) + attr("presentationTimeOffset", p.time_zero_us / 1000) + attr("startNumber", 0);
  for (std::size_t k = 0; k < p.sets.size(); ++k) {
    const AdaptationSet& s = p.sets[k];
    const char* type = s.type == AdaptationSet::Type::video ? "video" : s.type == AdaptationSet::Type::audio ? "audio" : "text";
    out += "    <AdaptationSet" + attr("id", k) + attr("contentType", type) +
           attr("mimeType", s.type == AdaptationSet::Type::text ? "text/vtt" : std::string(type) + "/mp4") + " segmentAlignment=\"true\"";
    if (s.type != AdaptationSet::Type::text) out += " startWithSAP=\"1\"";
    if (!s.language.empty()) out += attr("lang", s.language);
    out += ">\n";
    if (!s.label.empty()) out += "      <Label>" + escaped(s.label) + "</Label>\n";
    if (s.type != AdaptationSet::Type::video)
      out += std::string("      <Role schemeIdUri=\"urn:mpeg:dash:role:2011\" value=\"") + (s.is_default ? "main" : "alternate") + "\"/>\n";
    for (const Representation& r : s.representations) {
      out += "      <Representation" + attr("id", r.id) + attr("bandwidth", std::max<std::uint64_t>(r.bandwidth, 1));
      if (!r.codecs.empty()) out += attr("codecs", r.codecs);
      if (r.width && r.height) out += attr("width", r.width) + attr("height", r.height);
      if (r.frame_rate_num && r.frame_rate_den)
        out += attr("frameRate", std::to_string(r.frame_rate_num) + (r.frame_rate_den == 1 ? "" : "/" + std::to_string(r.frame_rate_den)));
      out += ">\n";
      if (s.type == AdaptationSet::Type::text) {
        out += "        <BaseURL>" + escaped(s.text_url) + "</BaseURL>\n";
      } else {
        if (r.channels)
          out += "        <AudioChannelConfiguration schemeIdUri=\"urn:mpeg:dash:23003:3:audio_channel_configuration:2011\"" +
                 attr("value", r.channels) + "/>\n";
        out += "        <SegmentTemplate" + attr("initialization", r.base + "init.mp4") + attr("media", r.base + "seg-$Number$.m4s") +
               template_attrs + ">\n" + timeline(p) + "        </SegmentTemplate>\n";
      }
      out += "      </Representation>\n";
    }
    out += "    </AdaptationSet>\n";
  }
  return out + "  </Period>\n</MPD>\n";
}

}  // namespace vod::proxy::dash
