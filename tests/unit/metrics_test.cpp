// SPDX-License-Identifier: LGPL-2.1-or-later
// The Prometheus text written by vod-server and vod-proxy: escaping, number formatting, the
// server's families (connections by kind and movie, rejects by code, registered bytes, the RDMA
// port's sysfs counters) and the proxy's, and /metrics as a plan.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "metrics/server_metrics.hpp"
#include "proxy_metrics.hpp"
#include "vod/metrics_text.hpp"

namespace {

namespace fs = std::filesystem;

bool has_line(const std::string& text, const std::string& line) { return ("\n" + text).find("\n" + line + "\n") != std::string::npos; }

TEST(MetricsText, FamiliesSamplesAndEscaping) {
  vod::metrics::Exposition m;
  m.family("x_total", "counter", "a help with a \\ and a\nnewline");
  m.sample("x_total", {{"movie", "a \"b\"\\c\nd"}, {"kind", "movie"}}, 3);
  m.sample("x_total", 1.5);
  m.sample("x_total", 12345678901234.0);
  EXPECT_EQ(m.text(),
            "# HELP x_total a help with a \\\\ and a\\nnewline\n"
            "# TYPE x_total counter\n"
            "x_total{movie=\"a \\\"b\\\"\\\\c\\nd\",kind=\"movie\"} 3\n"
            "x_total 1.5\n"
            "x_total 12345678901234\n");
}

struct FakeSysfs : ::testing::Test {
  fs::path root = fs::temp_directory_path() / ("vod-metrics-test-" + std::to_string(::getpid()));
  void SetUp() override {
    fs::create_directories(root / "rxe0/ports/1/counters");
    fs::create_directories(root / "rxe0/ports/1/hw_counters");
    std::ofstream(root / "rxe0/ports/1/counters/port_xmit_data") << "1234\n";
    std::ofstream(root / "rxe0/ports/1/hw_counters/sent_pkts") << "77\n";
    std::ofstream(root / "rxe0/ports/1/hw_counters/not_a_number") << "n/a\n";
  }
  void TearDown() override { fs::remove_all(root); }
};

TEST_F(FakeSysfs, ServerFamilies) {
  vod::server::ServerMetrics metrics(root.string());
  metrics.set_devices({{"rxe0", 1, 4096}});
  metrics.set_catalog(3, 2, 1);
  metrics.set_connections({{{"movie", "a.mp4"}, 2}, {{"live", "cam"}, 1}});
  metrics.count_accept("movie");
  metrics.count_accept("movie");
  metrics.count_reject(vod::proto::RejectCode::unknown_movie);
  metrics.count_reject(vod::proto::RejectCode::unsupported_kind);
  const std::string text = metrics.render();
  EXPECT_TRUE(has_line(text, "vod_server_catalog_generation 3")) << text;
  EXPECT_TRUE(has_line(text, "vod_server_movies 2")) << text;
  EXPECT_TRUE(has_line(text, "vod_server_connections{kind=\"movie\",movie=\"a.mp4\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "vod_server_connections{kind=\"live\",movie=\"cam\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "vod_server_connects_total{kind=\"movie\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "vod_server_rejects_total{code=\"unknown_movie\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "vod_server_rejects_total{code=\"unsupported_request_kind\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "vod_server_registered_bytes{device=\"rxe0\"} 4096")) << text;
  EXPECT_TRUE(has_line(text, "vod_rdma_port_stat{device=\"rxe0\",port=\"1\",counter=\"port_xmit_data\"} 1234")) << text;
  EXPECT_TRUE(has_line(text, "vod_rdma_hw_stat{device=\"rxe0\",port=\"1\",counter=\"sent_pkts\"} 77")) << text;
  EXPECT_EQ(text.find("not_a_number"), std::string::npos) << "a counter file that holds no number is skipped";
  EXPECT_EQ(text.find("vod_server_udp_"), std::string::npos) << "no UDP families without --udp-port";

  // A movie whose last viewer left stays at 0 rather than disappearing.
  metrics.set_connections({});
  EXPECT_TRUE(has_line(metrics.render(), "vod_server_connections{kind=\"movie\",movie=\"a.mp4\"} 0"));
}

TEST(ServerMetrics, MissingSysfsIsNoError) {
  vod::server::ServerMetrics metrics("/nonexistent-sysfs");
  metrics.set_devices({{"mlx5_0", 1, 1}});
  metrics.set_udp({});
  const std::string text = metrics.render();
  EXPECT_EQ(text.find("vod_rdma_port_stat"), std::string::npos);
  EXPECT_TRUE(has_line(text, "vod_server_udp_requests_total 0")) << text;
}

TEST(ProxyMetrics, ResponsesBytesAndRdmaFigures) {
  vod::proxy::ProxyMetrics metrics;
  metrics.connection_opened();
  metrics.response(200, 1000);
  metrics.response(206, 24);
  metrics.response(206, 0);
  vod::proxy::RdmaFigures rdma;
  rdma.sessions = 1;
  rdma.totals.reads_completed = 9;
  rdma.totals.bytes_read = 4096;
  rdma.totals.reconnects = 2;
  rdma.catalog_ok = true;
  const std::string text = metrics.render(rdma, vod::proxy::ThumbnailFigures{5, 1, 7});
  EXPECT_TRUE(has_line(text, "vod_proxy_http_requests_total{status=\"200\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_http_requests_total{status=\"206\"} 2")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_http_response_bytes_total 1024")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_http_connections 1")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_rdma_sessions 1")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_rdma_reads_total 9")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_rdma_reconnects_total 2")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_server_up 1")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_thumbnails_total{result=\"made\"} 5")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_thumbnails_total{result=\"placeholder\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "vod_proxy_thumbnails_total{result=\"cached\"} 7")) << text;
}

TEST(ProxyMetrics, PlanForEachMethod) {
  const auto get = vod::proxy::metrics_plan("GET", "m 1\n");
  EXPECT_EQ(get.status, 200u);
  EXPECT_EQ(get.text(), "m 1\n");
  ASSERT_NE(get.header("Content-Type"), nullptr);
  EXPECT_EQ(*get.header("Content-Type"), vod::metrics::kContentType);
  const auto head = vod::proxy::metrics_plan("HEAD", "m 1\n");
  EXPECT_EQ(head.status, 200u);
  EXPECT_FALSE(head.send_body);
  const auto post = vod::proxy::metrics_plan("POST", "");
  EXPECT_EQ(post.status, 405u);
  ASSERT_NE(post.header("Allow"), nullptr);
}

}  // namespace
