// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/source_spec.hpp"

#include <cstdlib>
#include <stdexcept>

#include "vod/protocol/catalog_layout.hpp"

namespace vod::server::live {

SourceSpec parse_source(const std::string& text) {
  SourceSpec s;
  s.text = text;
  if (text == "-") {
    s.kind = SourceSpec::Kind::standard_input;
    return s;
  }
  if (text.rfind("file:", 0) == 0) {
    s.kind = SourceSpec::Kind::file;
    s.path = text.substr(5);
    if (s.path.empty()) throw std::invalid_argument("live source '" + text + "': file: needs a path (file:/srv/live/loop.ts)");
    return s;
  }
  if (text.rfind("gst:", 0) == 0) {
    s.kind = SourceSpec::Kind::gst;
    s.pipeline = text.substr(4);
    if (s.pipeline.find_first_not_of(' ') == std::string::npos)
      throw std::invalid_argument("live source '" + text + "': gst: needs a pipeline whose last element produces MPEG-TS");
    return s;
  }
  if (text.rfind("udp://", 0) == 0) {
    s.kind = SourceSpec::Kind::udp;
    std::string rest = text.substr(6);
    if (const auto at = rest.find('@'); at != std::string::npos) {
      s.group = rest.substr(0, at);
      rest = rest.substr(at + 1);
    }
    const auto colon = rest.rfind(':');
    if (colon == std::string::npos)
      throw std::invalid_argument("live source '" + text + "': udp:// needs HOST:PORT (udp://[GROUP@]HOST:PORT)");
    s.host = rest.substr(0, colon);
    if (s.host.size() > 2 && s.host.front() == '[' && s.host.back() == ']') s.host = s.host.substr(1, s.host.size() - 2);
    const std::string port = rest.substr(colon + 1);
    char* end = nullptr;
    const unsigned long p = std::strtoul(port.c_str(), &end, 10);
    if (port.empty() || *end || p == 0 || p > 65535) throw std::invalid_argument("live source '" + text + "': the port must be 1..65535");
    s.port = static_cast<std::uint16_t>(p);
    if (s.group.empty() && s.host.empty()) s.host = "0.0.0.0";
    return s;
  }
  throw std::invalid_argument("live source '" + text + "' is not file:PATH, udp://[GROUP@]HOST:PORT, gst:PIPELINE or - (stdin)");
}

ChannelConfig parse_channel(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument("--live '" + text + "' must be NAME=SOURCE, e.g. cam=udp://239.0.0.1:5000 or demo=file:/srv/loop.ts");
  ChannelConfig c;
  c.name = text.substr(0, eq);
  if (const char* why = proto::invalid_channel_name_reason(c.name))
    throw std::invalid_argument("--live channel name '" + c.name + "': " + why);
  c.source = parse_source(text.substr(eq + 1));
  return c;
}

}  // namespace vod::server::live
