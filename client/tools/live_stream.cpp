// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live_stream.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "output.hpp"
#include "vod/client/live_source.hpp"
#include "vod/client/multicast_live_session.hpp"
#include "vod/log.hpp"
#include "vod/units.hpp"

namespace vod::client::cli {

boost::program_options::options_description live_options(LiveCliOptions& o) {
  namespace po = boost::program_options;
  po::options_description d("Live channels (rdma://host/live/NAME)");
  d.add_options()("credits", po::value(&o.credits)->default_value(o.credits),
                  "notifications the server may send ahead (receives posted); fewer means more coalescing")(
      "poll-ms", po::value(&o.poll_ms)->default_value(o.poll_ms),
      "follow the channel by reading its header every this many ms instead of by notifications (0: notifications)")(
      "udp-group", po::value(&o.udp_group),
      "with --transport udp: the multicast GROUP[:PORT] the server sends live channels to (its --live-multicast; port 7472 by default)")(
      "udp-interface", po::value(&o.udp_interface),
      "with --udp-group: the IPv4 address (IPv6: name) of the interface to join the group on")(
      "hole-timeout-ms", po::value(&o.hole_timeout_ms)->default_value(o.hole_timeout_ms),
      "with --udp-group: how long a live record waits for missing datagrams before it is delivered with its holes skipped")(
      "live-ring-mib", po::value(&o.ring_mib)->default_value(o.ring_mib), "with --udp-group: the receive ring, MiB");
  return d;
}

namespace {

// The loop of every live source: write what arrives, log discontinuities and ends of stream, and
// end on a frame boundary after `duration` seconds.
std::uint64_t pump(LiveSource& session, int fd, const std::string& what, double duration) {
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
    if (c.end_of_stream)
      log::info("vod-client", "live: end of stream at output byte " + std::to_string(written) + "; waiting for the source");
  }
  return written;
}

// The multicast receiver's options, from --udp-group and its companions.
MulticastLiveOptions multicast_live_options(const CommonOptions& common, const LiveCliOptions& live) {
  MulticastLiveOptions o;
  o.group = live.udp_group;
  o.interface = live.udp_interface;
  o.hole_timeout = std::chrono::milliseconds(live.hole_timeout_ms);
  o.ring_bytes = std::size_t{live.ring_mib} << 20;
  o.udp = common.session.udp;
  o.connect_timeout = common.session.connect_timeout;
  return o;
}

int stream_multicast(const Uri& uri, const CommonOptions& common, const LiveCliOptions& live, int fd, const std::string& what,
                     double duration) {
  MulticastLiveSession session(uri, multicast_live_options(common, live));
  const std::uint64_t written = pump(session, fd, what, duration);
  const auto& s = session.stats();
  const auto& r = session.receive_stats();
  log::info("vod-client", uri.to_string() + ": " + session.summary());
  std::fprintf(stderr,
               "LIVE bytes=%llu transport=multicast datagrams=%llu discontinuities=%llu records_complete=%llu records_with_holes=%llu "
               "hole_bytes=%llu records_lost=%llu lost_bytes=%llu dropped_source=%llu dropped_checksum=%llu dropped_other=%llu\n",
               static_cast<unsigned long long>(written), static_cast<unsigned long long>(s.datagrams),
               static_cast<unsigned long long>(s.discontinuities), static_cast<unsigned long long>(s.records_complete),
               static_cast<unsigned long long>(s.records_with_holes), static_cast<unsigned long long>(s.hole_bytes),
               static_cast<unsigned long long>(s.records_lost), static_cast<unsigned long long>(s.lost_bytes),
               static_cast<unsigned long long>(r.dropped_source), static_cast<unsigned long long>(r.dropped_checksum),
               static_cast<unsigned long long>(r.dropped_truncated + r.dropped_garbage + s.dropped_channel + s.dropped_inconsistent +
                                               s.dropped_ahead + s.dropped_late));
  return exit_ok;
}

LiveOptions rdma_live_options(const CommonOptions& common, const LiveCliOptions& live) {
  LiveOptions o;
  o.credits = live.credits;
  o.poll_interval = std::chrono::milliseconds(live.poll_ms);
  o.chunk_size = common.session.engine.chunk_size;
  o.read_depth = common.session.engine.read_depth;
  o.connect_timeout = common.session.connect_timeout;
  o.reconnect = common.session.reconnect;
  return o;
}

}  // namespace

std::optional<DvrStart> dvr_start(const std::string& text, bool live) {
  const bool negative = !text.empty() && text[0] == '-';
  if (!live) {
    char* end = nullptr;
    const double s = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0' || negative || !(s >= 0))
      throw ClientError(ErrorKind::usage, "--start '" + text + "': a movie starts at SECONDS from its beginning (0 or more)");
    return std::nullopt;
  }
  try {
    return parse_dvr_start(text);
  } catch (const ClientError& e) {
    throw ClientError(ErrorKind::usage, "--" + std::string(e.what()));
  }
}

int stream_dvr(const Uri& uri, const CommonOptions& common, const LiveCliOptions& live, const DvrStart& start, int fd,
               const std::string& what, double duration) {
  std::optional<MulticastLiveOptions> multicast;
  if (common.session.transport == Transport::udp) multicast = multicast_live_options(common, live);
  DvrSource source(uri, start, common.session, rdma_live_options(common, live), multicast);
  // --duration counts the stream's time from the start, read as fast as the window gives it.
  if (duration > 0) source.stop_after(std::chrono::microseconds(static_cast<std::int64_t>(duration * 1e6)));
  const std::uint64_t written = pump(source, fd, what, 0);
  const auto& s = source.stats();
  log::info("vod-client", uri.to_string() + ": " + source.summary());
  std::fprintf(stderr,
               "LIVE bytes=%llu transport=dvr window_bytes=%llu live_bytes=%llu moved_forward=%llu moved_bytes=%llu to_live=%llu "
               "to_window=%llu start_offset=%llu start_time_us=%llu\n",
               static_cast<unsigned long long>(written), static_cast<unsigned long long>(s.window_bytes),
               static_cast<unsigned long long>(s.live_bytes), static_cast<unsigned long long>(s.moved_forward),
               static_cast<unsigned long long>(s.moved_bytes), static_cast<unsigned long long>(s.to_live),
               static_cast<unsigned long long>(s.to_window), static_cast<unsigned long long>(source.started().offset),
               static_cast<unsigned long long>(source.started().time_us));
  return exit_ok;
}

int stream_live(const Uri& uri, const CommonOptions& common, const LiveCliOptions& live, int fd, const std::string& what, double duration) {
  if (common.session.transport == Transport::udp) return stream_multicast(uri, common, live, fd, what, duration);
  if (!live.udp_group.empty()) throw ClientError(ErrorKind::usage, "--udp-group is for --transport udp (live channels by multicast)");
  LiveSession session(uri, rdma_live_options(common, live));
  const std::uint64_t written = pump(session, fd, what, duration);
  const auto& s = session.stats();
  log::info("vod-client", uri.to_string() + ": " + s.summary());
  std::fprintf(stderr,
               "LIVE bytes=%llu notifications=%llu coalesced=%llu skips=%llu skipped_bytes=%llu overwritten=%llu torn=%llu "
               "reconnects=%llu latency_p50_us=%llu latency_p99_us=%llu latency_samples=%llu\n",
               static_cast<unsigned long long>(written), static_cast<unsigned long long>(s.notifications),
               static_cast<unsigned long long>(s.coalesced), static_cast<unsigned long long>(s.cursor.skips),
               static_cast<unsigned long long>(s.cursor.skipped_bytes), static_cast<unsigned long long>(s.cursor.overwritten),
               static_cast<unsigned long long>(s.torn_headers), static_cast<unsigned long long>(s.reconnects),
               static_cast<unsigned long long>(s.latency_us.percentile(0.5)),
               static_cast<unsigned long long>(s.latency_us.percentile(0.99)), static_cast<unsigned long long>(s.latency_us.count()));
  return exit_ok;
}

}  // namespace vod::client::cli
