// SPDX-License-Identifier: LGPL-2.1-or-later
// A live channel to a file or a pipe, for `vod-client play` and `vod-client get` of /live/ URIs.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>

#include "commands.hpp"
#include "vod/client/dvr_source.hpp"
#include "vod/client/live_session.hpp"

namespace vod::client::cli {

struct LiveCliOptions {
  unsigned credits = LiveOptions{}.credits;
  unsigned poll_ms = 0;
  std::string udp_group;  // with --transport udp: the multicast group of the server's --live-multicast
  std::string udp_interface;
  unsigned hole_timeout_ms = 200;
  unsigned ring_mib = 8;
};
boost::program_options::options_description live_options(LiveCliOptions& o);

// Streams `uri` to fd for `duration` seconds (0: until the reader goes away). Logs each
// discontinuity and end of stream with the output byte it happened at (info level), and ends with
// one machine-readable LIVE line on stderr. Returns the exit status.
int stream_live(const Uri& uri, const CommonOptions& common, const LiveCliOptions& live, int fd, const std::string& what, double duration);

// --start for play and get: a movie's seconds (nullopt: validated here, read by the caller), or for
// a live channel -SECONDS behind live or a UTC time (its DVR window, vod-server --live-dvr); "0" on
// a live channel is the live edge (nullopt). Throws ClientError(usage) for anything else.
std::optional<DvrStart> dvr_start(const std::string& text, bool live);
// As stream_live, from the channel's DVR window at `start`, handing over to the live ring.
int stream_dvr(const Uri& uri, const CommonOptions& common, const LiveCliOptions& live, const DvrStart& start, int fd,
               const std::string& what, double duration);

}  // namespace vod::client::cli
