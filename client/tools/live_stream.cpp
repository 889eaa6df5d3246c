// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_stream.hpp"

#include <chrono>
#include <cstdio>
#include <vector>

#include "output.hpp"
#include "vod/log.hpp"

namespace vod::client::cli {

boost::program_options::options_description live_options(LiveCliOptions& o) {
  namespace po = boost::program_options;
  po::options_description d("Live channels (rdma://host/live/NAME)");
  d.add_options()("credits", po::value(&o.credits)->default_value(o.credits),
                  "notifications the server may send ahead (receives posted); fewer means more coalescing")(
      "poll-ms", po::value(&o.poll_ms)->default_value(o.poll_ms),
      "follow the channel by reading its header every this many ms instead of by notifications (0: notifications)");
  return d;
}

int stream_live(const Uri& uri, const CommonOptions& common, const LiveCliOptions& live, int fd, const std::string& what, double duration) {
  LiveOptions o;
  o.credits = live.credits;
  o.poll_interval = std::chrono::milliseconds(live.poll_ms);
  o.chunk_size = common.session.engine.chunk_size;
  o.read_depth = common.session.engine.read_depth;
  o.connect_timeout = common.session.connect_timeout;
  o.reconnect_for = common.session.reconnect_for;
  LiveSession session(uri, o);
  std::vector<std::uint8_t> buffer(1u << 20);
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(duration));
  std::uint64_t written = 0;
  bool finishing = false;
  for (;;) {
    if (duration > 0 && !finishing && std::chrono::steady_clock::now() >= end) {
      session.finish();  // on to the next frame boundary, so the recording ends on a whole frame
      finishing = true;
    }
    if (finishing && std::chrono::steady_clock::now() >= end + std::chrono::seconds(5)) {
      log::warn("vod-client", "live: no frame boundary within 5 s of the end; stopping mid-stream");
      break;
    }
    const LiveChunk c = session.read(buffer, std::chrono::milliseconds(200));
    if (c.finished) break;
    if (c.discontinuity)
      log::info("vod-client", "live: discontinuity at output byte " + std::to_string(written) + " (stream offset " +
                                  std::to_string(c.stream_offset) + ")");
    if (c.bytes > 0) {
      if (!write_all(fd, buffer.data(), c.bytes, what)) {
        log::info("vod-client", "the reader closed the stream at byte " + std::to_string(written));
        break;
      }
      written += c.bytes;
    }
    if (c.end_of_stream) log::info("vod-client", "live: end of stream at output byte " + std::to_string(written) + "; waiting for the source");
  }
  const auto& s = session.stats();
  log::info("vod-client", uri.to_string() + ": " + s.summary());
  std::fprintf(stderr,
               "LIVE bytes=%llu notifications=%llu coalesced=%llu skips=%llu skipped_bytes=%llu overwritten=%llu torn=%llu "
               "reconnects=%llu latency_p50_us=%llu latency_p99_us=%llu latency_samples=%llu\n",
               static_cast<unsigned long long>(written), static_cast<unsigned long long>(s.notifications),
               static_cast<unsigned long long>(s.coalesced), static_cast<unsigned long long>(s.cursor.skips),
               static_cast<unsigned long long>(s.cursor.skipped_bytes), static_cast<unsigned long long>(s.cursor.overwritten),
               static_cast<unsigned long long>(s.torn_headers), static_cast<unsigned long long>(s.reconnects),
               static_cast<unsigned long long>(s.latency_us.percentile(0.5)), static_cast<unsigned long long>(s.latency_us.percentile(0.99)),
               static_cast<unsigned long long>(s.latency_us.count()));
  return exit_ok;
}

}  // namespace vod::client::cli
