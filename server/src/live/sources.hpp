// SPDX-License-Identifier: LGPL-2.1-or-later
// Live sources: where a channel's MPEG-TS comes from. Each runs on its own thread, feeds the channel
// (Channel::feed/flush) and tells it when a stream begins and ends. Every wait is bounded and wakes
// on the stop token, so the server stops promptly.
//
//   file:PATH                  a TS file replayed in real time by its PCR, looped (a discontinuity
//                              at each loop); for demos and tests
//   udp://[GROUP@]HOST:PORT    TS over UDP (raw or RTP), as ffmpeg, OBS and encoders send it:
//                              HOST:PORT is bound; a multicast HOST is joined; GROUP@HOST joins the
//                              multicast GROUP on the interface whose address is HOST
//   gst:PIPELINE               a GStreamer pipeline whose last element produces MPEG-TS; the server
//                              appends an appsink and restarts the pipeline when it fails
//   -                          TS on standard input
#pragma once

#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>

#include "live/channel.hpp"
#include "live/source_spec.hpp"

namespace vod::server::live {

struct SourceOptions {
  double silence_seconds = 2.0;      // udp: no datagram for this long ends the stream (it resumes with the next)
  double assumed_bitrate_bps = 8e6;  // file: pacing rate when the file carries no PCR and no bitrate can be probed
};

class Source {
 public:
  virtual ~Source() = default;
  // Feeds `channel` until `stop` is requested (or, for stdin, until its end).
  virtual void run(std::stop_token stop, Channel& channel) = 0;
};

std::unique_ptr<Source> make_source(const SourceSpec& spec, const SourceOptions& options);

// An estimate of a source's bitrate before it runs, to size the ring: the file's average bitrate;
// 0 when unknown (a network or pipeline source).
double estimated_bitrate_bps(const SourceSpec& spec);

}  // namespace vod::server::live
