// SPDX-License-Identifier: LGPL-2.1-or-later
#include "live/sources.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gst/app/gstappsink.h>
#include <gst/gst.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>
#include <vector>

#include "vod/log.hpp"
#include "vod/media/mapped_file.hpp"
#include "vod/media/probe.hpp"
#include "vod/media/ts_scanner.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::live {

namespace {

using Clock = std::chrono::steady_clock;
using media::kTsPacketSize;
using media::kTsSyncByte;

// Sleeps until `t` or until a stop is requested; false when stopped.
bool sleep_until(const std::stop_token& stop, Clock::time_point t) {
  std::mutex m;
  std::condition_variable_any cv;
  std::unique_lock lock(m);
  return !cv.wait_until(lock, stop, t, [] { return false; }) && !stop.stop_requested();
}

std::string errno_text() { return std::strerror(errno); }

// ------------------------------------------------------------------ file:PATH

// Replays a TS file in real time. Each PCR of the program says when its packet is due; packets
// between PCRs go out with the earlier one. Without a PCR the file is paced at its average bitrate.
class FileSource final : public Source {
 public:
  FileSource(std::string path, const SourceOptions& o) : path_(std::move(path)), options_(o) {}

  void run(std::stop_token stop, Channel& channel) override {
    std::unique_ptr<media::MappedFile> file;
    try {
      file = std::make_unique<media::MappedFile>(path_);
    } catch (const std::exception& e) {
      log::error("live", channel.name() + ": cannot open the source file: " + e.what());
      return;
    }
    const auto bytes = file->bytes();
    if (bytes.size() < 2 * kTsPacketSize || bytes[0] != kTsSyncByte || bytes[kTsPacketSize] != kTsSyncByte) {
      channel.begin_stream("file " + path_);
      channel.end_stream(path_ + " is not MPEG-TS (no 0x47 sync byte every 188 bytes); give a .ts file or remux it");
      return;
    }
    const std::size_t usable = bytes.size() / kTsPacketSize * kTsPacketSize;
    double fallback_bps = media::probe(bytes, path_).bitrate_bps;
    if (fallback_bps <= 0) fallback_bps = options_.assumed_bitrate_bps;
    channel.begin_stream("replaying " + path_ + " in a loop");
    for (std::uint64_t lap = 0; !stop.stop_requested(); ++lap) {
      if (lap > 0) channel.begin_stream("loop " + std::to_string(lap) + " of " + path_);
      if (!replay(stop, channel, bytes.first(usable), fallback_bps)) return;
    }
  }

 private:
  bool replay(const std::stop_token& stop, Channel& channel, std::span<const std::uint8_t> bytes, double fallback_bps) {
    constexpr double kPcrHz = 27e6;
    const Clock::time_point start = Clock::now();
    std::optional<std::uint64_t> origin_pcr;
    std::uint64_t last_pcr = 0;
    Clock::time_point origin = start;
    for (std::size_t at = 0; at < bytes.size(); at += kTsPacketSize) {
      const auto before = channel.cutter().last_pcr();
      channel.feed(bytes.subspan(at, kTsPacketSize));
      const auto pcr = channel.cutter().last_pcr();
      Clock::time_point due;
      if (pcr && pcr != before) {
        // Re-anchor when the PCR jumps back or far ahead (a splice or wrap inside the file).
        if (!origin_pcr || *pcr < last_pcr || *pcr - last_pcr > static_cast<std::uint64_t>(10 * kPcrHz)) {
          origin_pcr = *pcr;
          origin = std::max(Clock::now(), origin);
        }
        last_pcr = *pcr;
        due = origin + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>((*pcr - *origin_pcr) / kPcrHz));
      } else if (!origin_pcr) {
        due = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>((at + kTsPacketSize) * 8.0 / fallback_bps));
      } else {
        continue;  // between PCRs: goes out with the last one
      }
      if (due > Clock::now() + std::chrono::milliseconds(1)) {
        channel.flush();  // what is due now is published before the wait
        if (!sleep_until(stop, due)) return false;
      }
    }
    channel.flush();
    return !stop.stop_requested();
  }

  std::string path_;
  SourceOptions options_;
};

// ------------------------------------------------------------------ udp://[GROUP@]HOST:PORT

class UdpSource final : public Source {
 public:
  UdpSource(SourceSpec spec, const SourceOptions& o) : spec_(std::move(spec)), options_(o) {}

  void run(std::stop_token stop, Channel& channel) override {
    const UniqueFd socket = open_socket(channel.name());  // closed however run() ends, an exception included
    if (!socket) return;
    const int fd = socket.get();
    std::vector<std::uint8_t> datagram(65536);
    auto last_input = Clock::now();
    bool resumed = false;
    const auto silence = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.silence_seconds));
    while (!stop.stop_requested()) {
      pollfd p{fd, POLLIN, 0};
      const int n = poll(&p, 1, 100);
      if (n < 0 && errno != EINTR) {
        log::error("live", channel.name() + ": poll on the UDP source failed: " + errno_text());
        break;
      }
      if (n <= 0) {
        if (channel.streaming() && Clock::now() - last_input > silence)
          channel.end_stream("no datagram on " + spec_.text + " for " + std::to_string(options_.silence_seconds) + " s");
        continue;
      }
      // Everything that is waiting, then one flush: a record per burst, not per datagram.
      for (;;) {
        const ssize_t got = recv(fd, datagram.data(), datagram.size(), MSG_DONTWAIT);
        if (got < 0) break;
        if (!channel.streaming())
          channel.begin_stream(std::exchange(resumed, true) ? "input resumed on " + spec_.text : "input on " + spec_.text);
        last_input = Clock::now();
        channel.feed(ts_payload(std::span<const std::uint8_t>(datagram.data(), static_cast<std::size_t>(got))));
      }
      channel.flush();
    }
  }

 private:
  // Raw TS, or TS in RTP (RFC 2250: payload type 33, a 12-byte header plus CSRCs and extension).
  static std::span<const std::uint8_t> ts_payload(std::span<const std::uint8_t> d) {
    if (d.empty() || d[0] == kTsSyncByte || (d[0] & 0xc0) != 0x80 || d.size() < 12) return d;
    std::size_t header = 12 + 4 * std::size_t{d[0] & 0x0fu};
    if ((d[0] & 0x10) && d.size() >= header + 4) header += 4 + 4 * ((std::size_t{d[header + 2]} << 8) | d[header + 3]);
    if (header >= d.size() || d[header] != kTsSyncByte) return d;  // not RTP after all: let the cutter judge
    return d.subspan(header);
  }

  UniqueFd open_socket(const std::string& channel) {
    addrinfo hints{};
    hints.ai_socktype = SOCK_DGRAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const std::string port = std::to_string(spec_.port);
    // Multicast datagrams reach sockets bound to the group (or to any address), not to an
    // interface's own address: with GROUP@HOST the group is bound and HOST picks the interface.
    const std::string& bind_to = spec_.group.empty() ? spec_.host : spec_.group;
    if (int err = getaddrinfo(bind_to.c_str(), port.c_str(), &hints, &res)) {
      log::error("live", channel + ": cannot resolve " + spec_.text + ": " + gai_strerror(err));
      return {};
    }
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> info(res, freeaddrinfo);
    UniqueFd owned(socket(info->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!owned) {
      log::error("live", channel + ": socket: " + errno_text());
      return {};
    }
    const int fd = owned.get();
    const int one = 1, rcvbuf = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
    const bool host_is_group =
        info->ai_family == AF_INET && IN_MULTICAST(ntohl(reinterpret_cast<const sockaddr_in*>(info->ai_addr)->sin_addr.s_addr));
    if (bind(fd, info->ai_addr, info->ai_addrlen) != 0) {
      log::error("live", channel + ": cannot bind " + spec_.text + ": " + errno_text());
      return {};
    }
    if (!spec_.group.empty() || host_is_group) {
      ip_mreq m{};
      const std::string group = spec_.group.empty() ? spec_.host : spec_.group;
      if (inet_pton(AF_INET, group.c_str(), &m.imr_multiaddr) != 1 || !IN_MULTICAST(ntohl(m.imr_multiaddr.s_addr))) {
        log::error("live", channel + ": " + group + " is not an IPv4 multicast group");
        return {};
      }
      m.imr_interface.s_addr = htonl(INADDR_ANY);
      if (!spec_.group.empty()) inet_pton(AF_INET, spec_.host.c_str(), &m.imr_interface);
      if (setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &m, sizeof m) != 0) {
        log::error("live", channel + ": cannot join " + group + ": " + errno_text());
        return {};
      }
    }
    log::info("live", channel + ": listening for MPEG-TS on " + spec_.text);
    return owned;
  }

  SourceSpec spec_;
  SourceOptions options_;
};

// ------------------------------------------------------------------ - (standard input)

class StdinSource final : public Source {
 public:
  void run(std::stop_token stop, Channel& channel) override {
    std::vector<std::uint8_t> buf(1 << 16);
    channel.begin_stream("standard input");
    while (!stop.stop_requested()) {
      pollfd p{STDIN_FILENO, POLLIN, 0};
      const int n = poll(&p, 1, 100);
      if (n < 0 && errno != EINTR) break;
      if (n <= 0) {
        channel.flush();
        continue;
      }
      const ssize_t got = read(STDIN_FILENO, buf.data(), buf.size());
      if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (got <= 0) {
        channel.end_stream(got == 0 ? "standard input closed" : "reading standard input: " + errno_text());
        return;
      }
      channel.feed(std::span<const std::uint8_t>(buf.data(), static_cast<std::size_t>(got)));
      pollfd more{STDIN_FILENO, POLLIN, 0};
      if (poll(&more, 1, 0) == 0) channel.flush();
    }
  }
};

// ------------------------------------------------------------------ gst:PIPELINE

class GstSource final : public Source {
 public:
  explicit GstSource(std::string pipeline)
      : description_(std::move(pipeline) + " ! appsink name=vod_live_sink sync=false max-buffers=256") {}

  void run(std::stop_token stop, Channel& channel) override {
    auto backoff = std::chrono::seconds(1);
    while (!stop.stop_requested()) {
      const bool played = play(stop, channel);
      if (stop.stop_requested()) break;
      if (played) backoff = std::chrono::seconds(1);
      log::info("live", channel.name() + ": restarting the pipeline in " + std::to_string(backoff.count()) + " s");
      if (!sleep_until(stop, Clock::now() + backoff)) break;
      backoff = std::min(backoff * 2, std::chrono::seconds(10));
    }
  }

 private:
  struct Unref {
    void operator()(GstElement* e) const noexcept {
      gst_element_set_state(e, GST_STATE_NULL);
      gst_object_unref(e);
    }
  };

  // Runs the pipeline until it ends or fails; true when it delivered data.
  bool play(const std::stop_token& stop, Channel& channel) {
    GError* error = nullptr;
    std::unique_ptr<GstElement, Unref> pipeline(gst_parse_launch(description_.c_str(), &error));
    if (!pipeline || error) {
      channel.begin_stream("pipeline");
      channel.end_stream(std::string("the pipeline does not parse: ") + (error ? error->message : "unknown error"));
      if (error) g_error_free(error);
      return false;
    }
    GstElement* sink = gst_bin_get_by_name(GST_BIN(pipeline.get()), "vod_live_sink");
    std::unique_ptr<GstElement, decltype(&gst_object_unref)> sink_ref(sink, gst_object_unref);
    if (gst_element_set_state(pipeline.get(), GST_STATE_PLAYING) == GST_STATE_CHANGE_FAILURE) {
      channel.begin_stream("pipeline");
      channel.end_stream("the pipeline cannot start: " + bus_error(pipeline.get()));
      return false;
    }
    bool delivered = false;
    while (!stop.stop_requested()) {
      GstSample* sample = gst_app_sink_try_pull_sample(GST_APP_SINK(sink), 100 * GST_MSECOND);
      if (!sample) {
        if (gst_app_sink_is_eos(GST_APP_SINK(sink))) {
          channel.end_stream("the pipeline reached its end");
          return delivered;
        }
        const std::string failure = bus_error(pipeline.get());
        if (!failure.empty()) {
          if (!channel.streaming()) channel.begin_stream("pipeline");
          channel.end_stream("the pipeline failed: " + failure);
          return delivered;
        }
        channel.flush();
        continue;
      }
      if (!channel.streaming()) channel.begin_stream("pipeline started");
      GstBuffer* buffer = gst_sample_get_buffer(sample);
      GstMapInfo map;
      if (buffer && gst_buffer_map(buffer, &map, GST_MAP_READ)) {
        channel.feed(std::span<const std::uint8_t>(map.data, map.size));
        gst_buffer_unmap(buffer, &map);
        delivered = true;
      }
      gst_sample_unref(sample);
    }
    return delivered;
  }

  static std::string bus_error(GstElement* pipeline) {
    GstBus* bus = gst_element_get_bus(pipeline);
    std::string text;
    while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR)) {
      GError* e = nullptr;
      gst_message_parse_error(m, &e, nullptr);
      if (text.empty() && e) text = e->message;
      if (e) g_error_free(e);
      gst_message_unref(m);
    }
    gst_object_unref(bus);
    return text;
  }

  std::string description_;
};

}  // namespace

std::unique_ptr<Source> make_source(const SourceSpec& spec, const SourceOptions& options) {
  switch (spec.kind) {
    case SourceSpec::Kind::file: return std::make_unique<FileSource>(spec.path, options);
    case SourceSpec::Kind::udp: return std::make_unique<UdpSource>(spec, options);
    case SourceSpec::Kind::gst: return std::make_unique<GstSource>(spec.pipeline);
    case SourceSpec::Kind::standard_input: return std::make_unique<StdinSource>();
  }
  throw std::logic_error("unknown source kind");
}

double estimated_bitrate_bps(const SourceSpec& spec) {
  if (spec.kind != SourceSpec::Kind::file) return 0;
  try {
    media::MappedFile file(spec.path);
    return static_cast<double>(media::probe(file.bytes(), spec.path).bitrate_bps);
  } catch (const std::exception&) {
    return 0;  // the source reports the problem when it runs
  }
}

}  // namespace vod::server::live
