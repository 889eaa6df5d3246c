// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's Write-Record side in-process on loopback (no RDMA): the cookie exchange, records
// that arrive byte-exact, errors for what it cannot serve, and the anti-amplification rules: an
// address that has not echoed a cookie never gets more bytes than it sent, and an error is never
// larger than the request it answers.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <memory>
#include <utility>

#include "udp/cookie_jar.hpp"
#include "udp/udp_service.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server::udp {
namespace {

using Clock = std::chrono::steady_clock;

struct Peer {
  int fd = -1;
  explicit Peer(std::uint16_t port) {
    fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  }
  ~Peer() { close(fd); }
  std::uint64_t sent = 0, received = 0;
  std::vector<std::vector<std::uint8_t>> inbox;
  void send(const std::vector<std::uint8_t>& b) {
    ASSERT_EQ(::send(fd, b.data(), b.size(), 0), static_cast<ssize_t>(b.size()));
    sent += b.size();
  }
  void drain() {
    std::uint8_t buf[70000];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT)) >= 0;) {
      inbox.emplace_back(buf, buf + n);
      received += static_cast<std::uint64_t>(n);
    }
  }
  std::vector<std::vector<std::uint8_t>> take() {
    drain();
    return std::exchange(inbox, {});
  }
};

// Runs the service's event handling for `ms` milliseconds, while `peer` (if any) keeps its socket
// drained into its inbox, as a client does.
void run(UdpService& s, int ms, Peer* peer = nullptr) {
  const auto end = Clock::now() + std::chrono::milliseconds(ms);
  while (Clock::now() < end) {
    pollfd fds[2] = {{s.socket_fd(), POLLIN, 0}, {s.timer_fd(), POLLIN, 0}};
    if (poll(fds, 2, 1) > 0) {
      if (fds[0].revents & POLLIN) s.on_readable();
      if (fds[1].revents & POLLIN) s.on_timer();
    }
    if (peer) peer->drain();
  }
}

struct Fixture : ::testing::Test {
  std::vector<std::uint8_t> movie, index;
  std::unique_ptr<UdpService> service;
  void SetUp() override {
    movie.resize(300'000);
    for (std::size_t i = 0; i < movie.size(); ++i) movie[i] = static_cast<std::uint8_t>(i * 7 + (i >> 9));
    index.assign(48, 3);
    UdpOptions o;
    o.bind = "127.0.0.1";
    o.port = 0;
    o.max_payload = 1400;
    service = std::make_unique<UdpService>(o);
    auto r = std::make_shared<UdpRegions>();
    r->generation = 5;
    proto::Catalog c{5, {}};
    proto::CatalogEntry e;
    e.name = "m.ts";
    e.size = movie.size();
    e.movie = {0, movie.size(), 0};
    c.entries.push_back(e);
    r->catalog = udp_catalog(c);
    r->movies[proto::name_hash("m.ts")] = {movie, index, nullptr};
    service->publish(r);
  }
  proto::Cookie handshake(Peer& p) {
    p.send(proto::encode(proto::WriteRecordHello{77}));
    run(*service, 30);
    for (const auto& d : p.take()) {
      auto c = proto::decode_write_record_cookie(d);
      if (c && c->nonce == 77) return c->cookie;
    }
    ADD_FAILURE() << "no cookie";
    return {};
  }
  proto::WriteRecordRequest request(const proto::Cookie& cookie, std::uint64_t offset, std::uint64_t length) {
    proto::WriteRecordRequest r;
    r.session_id = 9;
    r.epoch = 1;
    r.record_seq = 1;
    r.cookie = cookie;
    r.region = proto::WriteRecordRegion::movie;
    r.selector = proto::name_hash("m.ts");
    r.catalog_generation = 5;
    r.offset = offset;
    r.length = length;
    r.buffer_length = 1 << 20;
    r.max_payload = 1400;
    r.rate_bps = 1'000'000'000;
    return r;
  }
};

TEST_F(Fixture, ACookieThenARecordByteExact) {
  Peer p(service->port());
  const auto hello_bytes = proto::encode(proto::WriteRecordHello{77}).size();
  const proto::Cookie cookie = handshake(p);
  EXPECT_LE(p.received, hello_bytes) << "the answer to a hello is never larger than the hello";
  auto r = request(cookie, 1000, 250'000);
  r.rate_bps = 20'000'000;  // this thread drains the socket between the server's sends: keep it small
  p.send(proto::encode(r));
  run(*service, 300, &p);
  std::vector<std::uint8_t> got(250'000);
  std::uint64_t bytes = 0;
  for (const auto& d : p.take()) {
    auto w = proto::decode_write_record_data(d, 1 << 20);
    ASSERT_TRUE(w.ok()) << w.error().message;
    EXPECT_EQ(w->session_id, 9u);
    EXPECT_EQ(w->epoch, 1u);
    EXPECT_LE(w->payload.size(), 1400u);
    std::copy(w->payload.begin(), w->payload.end(), got.begin() + static_cast<std::ptrdiff_t>(w->record_offset));
    bytes += w->payload.size();
  }
  EXPECT_EQ(bytes, 250'000u) << "each byte once, in datagrams of at most the payload asked for";
  EXPECT_TRUE(std::equal(got.begin(), got.end(), movie.begin() + 1000));
}

TEST_F(Fixture, NoCookieNoDataAndErrorsAreNeverLargerThanTheRequest) {
  Peer attacker(service->port());
  proto::Cookie forged{};
  forged[0] = 1;
  for (int i = 0; i < 200; ++i) attacker.send(proto::encode(request(forged, 0, 100'000)));  // a forged cookie
  auto huge = request(forged, 0, 16u << 20);
  huge.buffer_length = 32u << 20;
  for (int i = 0; i < 50; ++i) attacker.send(proto::encode(huge));  // a forged cookie and a huge range
  run(*service, 100, &attacker);
  attacker.take();
  EXPECT_LE(attacker.received, attacker.sent) << "an address that proved nothing got more than it sent";
  EXPECT_LE(attacker.received, 20u * 104) << "errors to one address are rate-limited (20 a second)";
  EXPECT_EQ(service->stats().datagrams, 0u) << "no data to an address without a cookie";
  EXPECT_GE(service->stats().bad_cookies, 100u);
}

TEST_F(Fixture, WhatItCannotServeIsRefusedWithAReason) {
  Peer p(service->port());
  const proto::Cookie cookie = handshake(p);
  auto unknown = request(cookie, 0, 100);
  unknown.selector = proto::name_hash("nope.ts");
  auto past_end = request(cookie, 299'990, 100);
  past_end.record_seq = 2;
  auto stale = request(cookie, 0, 100);
  stale.catalog_generation = 4;
  stale.record_seq = 3;
  auto huge = request(cookie, 0, 32u << 20);
  huge.buffer_length = 64u << 20;
  huge.record_seq = 4;
  auto truncated = unknown;
  truncated.record_seq = 5;
  std::vector<std::uint8_t> short_request = proto::encode(truncated);
  short_request.resize(40);
  for (const auto& r : {unknown, past_end, stale, huge}) p.send(proto::encode(r));
  p.send(short_request);
  run(*service, 50);
  std::map<std::uint64_t, proto::RejectCode> codes;
  for (const auto& d : p.take()) {
    EXPECT_LE(d.size(), 104u);
    auto e = proto::decode_write_record_error(d);
    ASSERT_TRUE(e.ok()) << e.error().message;
    codes[e->record_seq] = e->code;
  }
  EXPECT_EQ(codes[1], proto::RejectCode::unknown_movie);
  EXPECT_EQ(codes[2], proto::RejectCode::malformed_request);
  EXPECT_EQ(codes[3], proto::RejectCode::stale_catalog);
  EXPECT_EQ(codes[4], proto::RejectCode::malformed_request);
  EXPECT_EQ(codes[5], proto::RejectCode::malformed_request);
  EXPECT_EQ(service->stats().datagrams, 0u);
}

TEST_F(Fixture, ANewerEpochDropsWhatTheOlderStillHadQueued) {
  Peer p(service->port());
  const proto::Cookie cookie = handshake(p);
  auto slow = request(cookie, 0, 290'000);
  slow.rate_bps = 2'000'000;  // 250 kB/s: the range takes a second
  p.send(proto::encode(slow));
  auto next = request(cookie, 0, 1000);
  next.epoch = 2;
  next.record_seq = 2;
  next.rate_bps = 2'000'000;
  p.send(proto::encode(next));
  run(*service, 300, &p);
  std::uint64_t old_epoch = 0, new_epoch = 0;
  for (const auto& d : p.take()) {
    auto w = proto::decode_write_record_data(d, 1 << 20);
    ASSERT_TRUE(w.ok());
    (w->epoch == 1 ? old_epoch : new_epoch) += w->payload.size();
  }
  EXPECT_EQ(new_epoch, 1000u);
  EXPECT_LT(old_epoch, 290'000u / 2) << "the seek's older range kept being sent";
  EXPECT_GE(service->stats().superseded, 1u);
}

TEST(CookieJar, ValidForItsWindowAndTheNextOnlyAndOnlyForItsAddress) {
  CookieJar jar;
  sockaddr_storage a{}, b{};
  reinterpret_cast<sockaddr_in&>(a) = {AF_INET, htons(1000), {htonl(0x7f000001)}, {}};
  reinterpret_cast<sockaddr_in&>(b) = {AF_INET, htons(1001), {htonl(0x7f000001)}, {}};
  const auto c = jar.make(a, 6000);
  EXPECT_TRUE(jar.valid(c, a, 6000));
  EXPECT_TRUE(jar.valid(c, a, 6000 + CookieJar::kWindowSeconds));
  EXPECT_FALSE(jar.valid(c, a, 6000 + 2 * CookieJar::kWindowSeconds));
  EXPECT_FALSE(jar.valid(c, b, 6000)) << "another port is another address";
  EXPECT_FALSE(CookieJar().valid(c, a, 6000)) << "another server's secret";
}

}  // namespace
}  // namespace vod::server::udp
