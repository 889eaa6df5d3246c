// SPDX-License-Identifier: LGPL-2.1-or-later
// Movie bytes are hostile: a file whose bytes are a playlist, a manifest or a concat script must
// never make the probe, the keyframe indexer or the thumbnailer open what it names. A local TCP
// listener stands for the URL; it counts every connection it gets (it must get none). A source that
// stalls must not hold the caller past its time limit either.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

extern "C" {
#include <libavformat/avformat.h>
}

#include "vod/media/probe.hpp"
#include "vod/media/thumbnail.hpp"

namespace vod::media {
namespace {

// A TCP listener on 127.0.0.1 that accepts and counts connections (closing each at once, so an
// unconfined libavformat fails fast instead of waiting on it).
class CountingListener {
 public:
  CountingListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(listen(fd_, 16), 0);
    socklen_t len = sizeof a;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] {
      while (!stop_) {
        pollfd p{fd_, POLLIN, 0};
        if (poll(&p, 1, 20) > 0) {
          const int c = accept(fd_, nullptr, nullptr);
          if (c >= 0) {
            ++connections_;
            close(c);
          }
        }
      }
    });
  }
  ~CountingListener() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  unsigned short port() const { return port_; }
  int connections() const { return connections_; }

 private:
  int fd_ = -1;
  unsigned short port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

std::vector<std::uint8_t> bytes_of(const std::string& text) { return {text.begin(), text.end()}; }

std::string url(const CountingListener& l, const std::string& path) { return "http://127.0.0.1:" + std::to_string(l.port()) + path; }

struct Hostile {
  const char* what;
  const char* demuxer;  // libavformat's demuxer for it
  std::string (*make)(const CountingListener&);
};

const Hostile kHostile[] = {
    {"HLS media playlist", "hls",
     [](const CountingListener& l) {
       return "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:0\n#EXTINF:4.0,\n" + url(l, "/a.ts") +
              "\n#EXTINF:4.0,\n" + url(l, "/b.ts") + "\n#EXT-X-ENDLIST\n";
     }},
    {"HLS multivariant playlist", "hls",
     [](const CountingListener& l) { return "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=800000\n" + url(l, "/a.m3u8") + "\n"; }},
    {"HLS playlist naming a local file", "hls",
     [](const CountingListener&) {
       return std::string("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4.0,\nfile:/etc/passwd\n#EXT-X-ENDLIST\n");
     }},
    {"ffconcat script", "concat",
     [](const CountingListener& l) { return "ffconcat version 1.0\nfile '" + url(l, "/c.ts") + "'\nfile '/etc/passwd'\n"; }},
    {"DASH manifest", "dash",
     [](const CountingListener& l) {
       return "<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" "
              "profiles=\"urn:mpeg:dash:profile:isoff-on-demand:2011\" type=\"static\" mediaPresentationDuration=\"PT8S\">"
              "<BaseURL>" +
              url(l, "/") +
              "</BaseURL><Period><AdaptationSet mimeType=\"video/mp4\"><Representation id=\"1\" bandwidth=\"1\">"
              "<SegmentList duration=\"4\"><SegmentURL media=\"s1.m4s\"/></SegmentList></Representation></AdaptationSet></Period></MPD>\n";
     }},
    {"SDP session", "sdp",
     [](const CountingListener&) {
       return std::string(
           "v=0\r\no=- 0 0 IN IP4 127.0.0.1\r\ns=x\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=video 5004 RTP/AVP 96\r\na=rtpmap:96 "
           "H264/90000\r\n");
     }},
};

TEST(NestedOpen, ProbeRefusesFilesThatNameOtherResourcesAndOpensNothing) {
  for (const auto& h : kHostile) {
    SCOPED_TRACE(h.what);
    CountingListener listener;
    const auto bytes = bytes_of(h.make(listener));
    const MediaInfo info = probe(bytes, "hostile");
    EXPECT_FALSE(info.is_media);
    if (h.demuxer && !av_find_input_format(h.demuxer)) {
      // This libavformat has no such demuxer (Debian's has no DASH): raw bytes, nothing opened.
      EXPECT_FALSE(info.refused) << info.note;
    } else {
      EXPECT_TRUE(info.refused) << info.note;
      EXPECT_NE(info.note.find("names other files or URLs"), std::string::npos) << info.note;
    }
    EXPECT_TRUE(index_keyframes(bytes, info).entries.empty());
    EXPECT_THROW(make_thumbnail(bytes, std::nullopt), ThumbnailError);
    EXPECT_THROW(make_thumbnail(bytes, FramePosition{1'000'000, 188}), ThumbnailError);
    // Give an unconfined demuxer's connection time to arrive before counting.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_EQ(listener.connections(), 0) << "libavformat opened a URL named by the file's bytes";
  }
}

TEST(NestedOpen, TextThatIsNoFormatIsServedAsRawBytes) {
  // Garbage and plain text stay what they were: raw bytes, not refused, not media.
  const auto bytes = bytes_of("just some notes about the movies in this directory\n");
  const MediaInfo info = probe(bytes, "notes.txt");
  EXPECT_FALSE(info.refused) << info.note;
  EXPECT_FALSE(info.is_media);
}

TEST(NestedOpen, AFormatOffTheListIsNotDemuxed) {
  // A WAV file is on the list and probes as media; a bare JPEG (libavformat's image demuxers) is
  // not on it and is served as raw bytes, never opened by a demuxer.
  const std::vector<std::uint8_t> jpeg = placeholder_jpeg(64, 64);
  const MediaInfo info = probe(jpeg, "poster.jpg");
  EXPECT_FALSE(info.is_media);
  EXPECT_FALSE(info.refused);
  EXPECT_NE(info.note.find("not a container this server serves"), std::string::npos) << info.note;
}

TEST(NestedOpen, AStalledSourceGivesUpAtItsTimeLimit) {
  // A source that takes 100 ms per read (a tarpit): the thumbnail gives up within its limit.
  const std::string dir = std::getenv("VOD_TEST_MEDIA_DIR") ? std::getenv("VOD_TEST_MEDIA_DIR") : "";
  std::ifstream in(dir + "/test-480p-60s.ts", std::ios::binary);
  ASSERT_TRUE(in) << "no test media in VOD_TEST_MEDIA_DIR";
  const std::vector<std::uint8_t> movie((std::istreambuf_iterator<char>(in)), {});
  auto slow = [&](std::uint64_t offset, std::span<std::uint8_t> dest) -> std::size_t {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (offset >= movie.size()) return 0;
    const std::size_t n = std::min<std::size_t>({dest.size(), movie.size() - offset, 188});
    std::memcpy(dest.data(), movie.data() + offset, n);
    return n;
  };
  ThumbnailOptions o;
  o.time_limit = std::chrono::milliseconds(1500);
  const auto started = std::chrono::steady_clock::now();
  try {
    make_thumbnail(movie.size(), slow, FramePosition{30'000'000, std::nullopt}, o);
    ADD_FAILURE() << "a picture from a source that yields 188 bytes per 100 ms";
  } catch (const ThumbnailError& e) {
    EXPECT_NE(std::string(e.what()).find("gave up after 1.5 s"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1500 + 1000));
}

}  // namespace
}  // namespace vod::media
