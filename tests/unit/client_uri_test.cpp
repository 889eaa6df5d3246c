#include <gtest/gtest.h>

#include "vod/client/stats.hpp"
#include "vod/client/uri.hpp"

namespace vod::client {
namespace {

TEST(Uri, ParsesHostPortAndMovie) {
  EXPECT_EQ(parse_uri("rdma://192.0.2.1:7471/movie.mp4"), (Uri{"192.0.2.1", 7471, "movie.mp4"}));
  EXPECT_EQ(parse_uri("rdma://server/movie.mp4"), (Uri{"server", kDefaultPort, "movie.mp4"}));
  EXPECT_EQ(parse_uri("rdma://server"), (Uri{"server", kDefaultPort, std::nullopt}));
  EXPECT_EQ(parse_uri("rdma://server:9/"), (Uri{"server", 9, std::nullopt}));
  EXPECT_EQ(parse_uri("rdma://[fd00::1]:7470/a.ts"), (Uri{"fd00::1", 7470, "a.ts"}));
  EXPECT_EQ(parse_uri("rdma://h/My%20Movie%20%28HD%29.mkv").movie, "My Movie (HD).mkv");
}

TEST(Uri, NamesALiveChannelUnderLive) {
  const Uri cam = parse_uri("rdma://192.0.2.1/live/cam%201");
  EXPECT_TRUE(cam.live);
  EXPECT_EQ(cam.movie, "cam 1");
  EXPECT_EQ(cam.to_string(), "rdma://192.0.2.1:7470/live/cam%201");
  const Uri movie = parse_uri("rdma://h/live");  // a movie that happens to be called "live"
  EXPECT_FALSE(movie.live);
  EXPECT_EQ(movie.movie, "live");
  EXPECT_THROW(parse_uri("rdma://h/live/"), UriError);
  EXPECT_THROW(parse_uri("rdma://h/live/a/b"), UriError);  // a channel's name holds no '/'
}

TEST(Uri, NamesAMovieByItsPathInTheLibrary) {
  const std::string name = "Films/Läder (2024)/Läder (2024) - 720p #1 50% ?.mp4";
  const Uri u = parse_uri("rdma://h/Films/L%C3%A4der%20(2024)/L%C3%A4der%20(2024)%20-%20720p%20%231%2050%25%20%3F.mp4");
  EXPECT_EQ(u.movie, name);
  EXPECT_FALSE(u.live);
  EXPECT_EQ(u.to_string(), "rdma://h:7470/Films/L%C3%A4der%20%282024%29/L%C3%A4der%20%282024%29%20-%20720p%20%231%2050%25%20%3F.mp4");
  EXPECT_EQ(parse_uri(u.to_string()), u);
  EXPECT_EQ(parse_uri("rdma://h/Films%2Fa.mp4").movie, "Films/a.mp4");  // %2F is a '/' too
  EXPECT_EQ(percent_encode_path("a b/c#d"), "a%20b/c%23d");
  EXPECT_EQ(percent_encode("a b/c"), "a%20b%2Fc");
  std::string longest;
  for (char c : {'a', 'b', 'c', 'd'}) longest.append(longest.empty() ? 0 : 1, '/').append(255, c);
  EXPECT_EQ(parse_uri("rdma://h/" + longest).movie, longest);  // 1023 bytes
}

TEST(Uri, RoundTripsThroughItsCanonicalForm) {
  for (const char* text : {"rdma://h:1/a%20b.ts", "rdma://[fd00::1]:7470/x.mp4", "rdma://h:7470", "rdma://h:7470/live/c"}) {
    const Uri u = parse_uri(text);
    EXPECT_EQ(parse_uri(u.to_string()), u) << text;
  }
  EXPECT_EQ(parse_uri("rdma://h/a b").to_string(), "rdma://h:7470/a%20b");
}

TEST(Uri, RejectsWhatIsNotAValidUri) {
  auto message = [](const char* text) {
    try {
      parse_uri(text);
    } catch (const UriError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message("http://h/a").find("the scheme must be rdma://"), std::string::npos);
  EXPECT_NE(message("rdma:///a").find("the host is empty"), std::string::npos);
  EXPECT_NE(message("rdma://h:/a").find("the port after ':' is empty"), std::string::npos);
  EXPECT_NE(message("rdma://h:70000/a").find("above 65535"), std::string::npos);
  EXPECT_NE(message("rdma://h:0/a").find("port 0"), std::string::npos);
  EXPECT_NE(message("rdma://h:12x/a").find("not a number"), std::string::npos);
  EXPECT_NE(message("rdma://[fd00::1/a").find("closing ']'"), std::string::npos);
  EXPECT_NE(message("rdma://h/a%2").find("two hex digits"), std::string::npos);
  EXPECT_NE(message("rdma://h/a%zz").find("two hex digits"), std::string::npos);
  EXPECT_NE(message("rdma://h/a//b").find("empty folder name"), std::string::npos);
  EXPECT_NE(message("rdma://h/a/").find("ends with '/'"), std::string::npos);
  EXPECT_NE(message("rdma://h/%2Fa").find("starts with '/'"), std::string::npos);
  EXPECT_NE(message("rdma://h/a/../b").find("'.' or '..'"), std::string::npos);
  EXPECT_NE(message("rdma://h/a%E9.mp4").find("not UTF-8"), std::string::npos);
  EXPECT_NE(message("rdma://h/..").find("'.' or '..'"), std::string::npos);
  EXPECT_NE(message("rdma://h/a?x=1").find("token=HEX"), std::string::npos);
  EXPECT_NE(message("rdma://h/x").find("(accepted)"), std::string::npos);
  EXPECT_NE(message("nope").find("expected rdma://host[:port][/movie]"), std::string::npos);
}

TEST(Uri, NamesAFleet) {
  const Uri u = parse_uri("rdma+etcd://192.0.2.10/movie.mp4");
  ASSERT_TRUE(u.cluster);
  EXPECT_EQ(u.cluster->etcd.host, "192.0.2.10");
  EXPECT_EQ(u.cluster->etcd.port, 2379);
  EXPECT_EQ(u.cluster->etcd.prefix, "/rdma-vod");
  EXPECT_EQ(u.cluster->spread, 0u);
  EXPECT_EQ(u.movie, "movie.mp4");
  EXPECT_TRUE(u.host.empty());
  EXPECT_EQ(u.to_string(), "rdma+etcd://192.0.2.10:2379/movie.mp4");
  const Uri w = parse_uri("rdma+etcd://[::1]:2380/live/cam?prefix=/tv/fleet&k=3&token=" + std::string(64, 'a'));
  EXPECT_TRUE(w.live);
  EXPECT_EQ(w.cluster->etcd.prefix, "/tv/fleet");
  EXPECT_EQ(w.cluster->spread, 3u);
  EXPECT_TRUE(w.token);
  EXPECT_EQ(w.to_string(), "rdma+etcd://[::1]:2380/live/cam?prefix=/tv/fleet&k=3");
  EXPECT_EQ(parse_uri(w.to_string()).cluster, w.cluster);
  const Uri tls = parse_uri("rdma+etcds://192.0.2.10/movie.mp4");
  EXPECT_TRUE(tls.cluster->etcd.tls);
  EXPECT_EQ(tls.to_string(), "rdma+etcds://192.0.2.10:2379/movie.mp4");
  // Bounded loads: 0.15 unless ?epsilon= says otherwise (0: no bound).
  EXPECT_EQ(u.cluster->load_epsilon, 0.15);
  const Uri e = parse_uri("rdma+etcd://192.0.2.10/m?epsilon=0.25");
  EXPECT_EQ(e.cluster->load_epsilon, 0.25);
  EXPECT_EQ(e.to_string(), "rdma+etcd://192.0.2.10:2379/m?epsilon=0.25");
  EXPECT_EQ(parse_uri(e.to_string()).cluster, e.cluster);
  EXPECT_EQ(parse_uri("rdma+etcd://h/m?epsilon=0").cluster->load_epsilon, 0);
  // The failover watch: 1000 ms unless ?failover-ms= says otherwise (0: not watched).
  EXPECT_EQ(u.cluster->failover_ms, 1000u);
  const Uri f = parse_uri("rdma+etcd://h/m?failover-ms=2500&epsilon=0.25");
  EXPECT_EQ(f.cluster->failover_ms, 2500u);
  EXPECT_EQ(f.to_string(), "rdma+etcd://h:2379/m?epsilon=0.25&failover-ms=2500");
  EXPECT_EQ(parse_uri(f.to_string()).cluster, f.cluster);
  EXPECT_EQ(parse_uri("rdma+etcd://h/m?failover-ms=0").cluster->failover_ms, 0u);
  for (const char* bad : {"rdma+etcd:///m",
                          "rdma+etcd://h/m?k=0",
                          "rdma+etcd://h/m?k=17",
                          "rdma+etcd://h/m?prefix=a//b",
                          "rdma+etcd://h/m?x=1",
                          "rdma://h/m?prefix=/p",
                          "rdma+etcd://h:0/m",
                          "rdma+etcd://h/m?epsilon=",
                          "rdma+etcd://h/m?epsilon=-1",
                          "rdma+etcd://h/m?epsilon=11",
                          "rdma+etcd://h/m?epsilon=1e3",
                          "rdma+etcd://h/m?epsilon=nan",
                          "rdma+etcd://h/m?epsilon=0.1.2",
                          "rdma://h/m?epsilon=0.2",
                          "rdma+etcd://h/m?failover-ms=",
                          "rdma+etcd://h/m?failover-ms=199",
                          "rdma+etcd://h/m?failover-ms=60001",
                          "rdma+etcd://h/m?failover-ms=-5",
                          "rdma+etcd://h/m?failover-ms=1e3",
                          "rdma+etcd://h/m?failover-ms=999999",
                          "rdma://h/m?failover-ms=1000"})
    EXPECT_THROW(parse_uri(bad), UriError) << bad;
}

TEST(LatencyHistogram, PercentilesAreWithinABucket) {
  LatencyHistogram h;
  EXPECT_EQ(h.percentile(0.5), 0u);
  for (std::uint64_t v = 1; v <= 1000; ++v) h.record(v);
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.max(), 1000u);
  EXPECT_NEAR(static_cast<double>(h.percentile(0.5)), 500, 500 * 0.13);
  EXPECT_NEAR(static_cast<double>(h.percentile(0.9)), 900, 900 * 0.13);
  EXPECT_EQ(h.percentile(1.0), 1000u);
  LatencyHistogram small;
  for (int i = 0; i < 10; ++i) small.record(7);
  EXPECT_EQ(small.percentile(0.99), 7u);  // exact below 8
  h.merge(small);
  EXPECT_EQ(h.count(), 1010u);
}

TEST(LatencySamples, PercentilesAreExactNearestRank) {
  LatencySamples s;
  EXPECT_EQ(s.percentile(0.5), 0u);
  for (std::uint64_t v : {900, 100, 500, 300, 700}) s.record(v);  // out of order
  EXPECT_EQ(s.count(), 5u);
  EXPECT_EQ(s.percentile(0.5), 500u);  // rank ceil(2.5) = 3
  EXPECT_EQ(s.percentile(0.0), 100u);
  EXPECT_EQ(s.percentile(0.99), 900u);  // rank 5
  EXPECT_EQ(s.percentile(0.4), 300u);   // rank 2 exactly
  LatencySamples more;
  for (std::uint64_t v : {801, 802, 803, 804, 805}) more.record(v);
  s.merge(more);
  EXPECT_EQ(s.count(), 10u);
  EXPECT_EQ(s.percentile(0.5), 801u);  // 100 300 500 700 801 | 802 ... 900: rank 5
  EXPECT_EQ(s.percentile(0.6), 802u);
}

TEST(Stats, SummaryNamesEveryCounter) {
  Stats s;
  s.bytes_delivered = 10;
  s.stalls = 2;
  s.read_latency_us.record(100);
  const std::string line = s.summary();
  for (const char* w : {"delivered 10 B", "2 stalls", "p50", "p99", "reconnects", "stale discarded"})
    EXPECT_NE(line.find(w), std::string::npos) << w << " in " << line;
}

}  // namespace
}  // namespace vod::client
