// SPDX-License-Identifier: LGPL-2.1-or-later
// What --live NAME=SOURCE says, parsed once, at configuration time (server_config.cpp): the
// channel's name and where its MPEG-TS comes from (sources.hpp runs it). Pure: no file is opened
// and no socket bound here.
#pragma once

#include <cstdint>
#include <string>

namespace vod::server::live {

struct SourceSpec {
  enum class Kind { file, udp, gst, standard_input } kind = Kind::file;
  std::string path;      // file
  std::string pipeline;  // gst
  std::string group;     // udp: multicast group to join, or empty
  std::string host;      // udp: address to bind (or the group itself)
  std::uint16_t port = 0;
  std::string text;  // as given, for logs
};

// Parses SOURCE of --live NAME=SOURCE; throws std::invalid_argument saying what is wrong.
SourceSpec parse_source(const std::string& text);

struct ChannelConfig {
  std::string name;
  SourceSpec source;
};

// Parses NAME=SOURCE (--live), once, at configuration time; throws std::invalid_argument.
ChannelConfig parse_channel(const std::string& text);

}  // namespace vod::server::live
