// SPDX-License-Identifier: LGPL-2.1-or-later
// The Write-Record server's deciders, without a socket: who a client is (an IPv4 address, an IPv6
// /64), the fixed pre-cookie budget table and its keyed hash, which address sends next (deficit
// round robin, driven here by a simulated link), the rate floor, job deadlines, and how many
// datagrams one send carries.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "udp/address_budgets.hpp"
#include "udp/fair_queue.hpp"
#include "udp/udp_admission.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server::udp {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

sockaddr_storage ip(const std::string& text, std::uint16_t port = 1000) {
  sockaddr_storage s{};
  if (text.find(':') == std::string::npos) {
    auto& a = reinterpret_cast<sockaddr_in&>(s);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    EXPECT_EQ(inet_pton(AF_INET, text.c_str(), &a.sin_addr), 1) << text;
  } else {
    auto& a = reinterpret_cast<sockaddr_in6&>(s);
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    EXPECT_EQ(inet_pton(AF_INET6, text.c_str(), &a.sin6_addr), 1) << text;
  }
  return s;
}

TEST(SipHash, MatchesTheReferenceVectors) {
  HashKey key;
  for (std::size_t i = 0; i < key.size(); ++i) key[i] = static_cast<std::uint8_t>(i);
  std::uint8_t in[15];
  for (std::size_t i = 0; i < sizeof in; ++i) in[i] = static_cast<std::uint8_t>(i);
  // Aumasson and Bernstein, SipHash: a fast short-input PRF, appendix A and the reference vectors.
  EXPECT_EQ(siphash24(key, in, 0), 0x726fdb47dd0e0e31ull);
  EXPECT_EQ(siphash24(key, in, 8), 0x93f5f5799a932462ull);
  EXPECT_EQ(siphash24(key, in, 15), 0xa129ca6149be45e5ull);
}

TEST(AddressKey, OneClientIsAnIpv4AddressOrAnIpv6Slash64WhateverThePort) {
  struct Case {
    const char* a;
    const char* b;
    bool same;
  } cases[] = {
      {"192.0.2.7", "192.0.2.7", true},  // another port: the same client
      {"192.0.2.7", "192.0.2.8", false},
      {"2001:db8:1:2::1", "2001:db8:1:2:ffff::9", true},  // one /64: one host's SLAAC addresses
      {"2001:db8:1:2::1", "2001:db8:1:3::1", false},
      {"::ffff:192.0.2.7", "192.0.2.7", true},  // a dual-stack socket's IPv4 peer
      {"::ffff:192.0.2.7", "192.0.2.8", false},
      {"::1", "::2", true},  // ::/64
  };
  for (const Case& c : cases) {
    EXPECT_EQ(address_key(ip(c.a, 1000)) == address_key(ip(c.b, 2000)), c.same) << c.a << " vs " << c.b;
  }
  EXPECT_EQ(to_string(address_key(ip("192.0.2.7"))), "192.0.2.7");
  EXPECT_EQ(to_string(address_key(ip("2001:db8:1:2::1"))), "2001:db8:1:2::/64");
  EXPECT_EQ(to_string(address_key(ip("::1"))), "0:0:0:0::/64");
}

TEST(PreCookieTable, BudgetsPerAddressInAFixedTable) {
  const auto t0 = Clock::now();
  HashKey key{};
  key[0] = 42;
  PreCookieTable::Limits limits;
  limits.hellos_per_second = 10;
  limits.hello_burst = 3;
  limits.errors_per_second = 1;
  limits.error_burst = 2;
  PreCookieTable table(1000, key, limits, t0);
  EXPECT_EQ(table.slots(), 1024u) << "a power of two";
  const AddressKey a = address_key(ip("192.0.2.1")), b = address_key(ip("192.0.2.2"));
  ASSERT_NE(table.slot_of(a), table.slot_of(b)) << "pick two addresses that do not share a slot under this key";
  // The burst, then nothing; another address has its own budget; time refills.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(table.take_hello(a, t0));
  EXPECT_FALSE(table.take_hello(a, t0));
  EXPECT_TRUE(table.take_hello(b, t0));
  EXPECT_TRUE(table.take_error(a, t0)) << "errors have a budget of their own";
  EXPECT_TRUE(table.take_error(a, t0));
  EXPECT_FALSE(table.take_error(a, t0));
  EXPECT_FALSE(table.take_hello(a, t0 + 50ms));
  EXPECT_TRUE(table.take_hello(a, t0 + 150ms)) << "10 a second: one more by 100 ms later";
  EXPECT_FALSE(table.take_error(a, t0 + 500ms));
  EXPECT_TRUE(table.take_error(a, t0 + 1100ms));
  // Ports do not matter (the key is the address), and another hash key puts addresses elsewhere.
  EXPECT_EQ(table.slot_of(address_key(ip("192.0.2.1", 1))), table.slot_of(address_key(ip("192.0.2.1", 65535))));
  HashKey other = key;
  other[0] = 43;
  PreCookieTable shuffled(1024, other, limits, t0);
  int moved = 0;
  for (int i = 0; i < 64; ++i) {
    const AddressKey k = address_key(ip("10.0.0." + std::to_string(i)));
    moved += table.slot_of(k) != shuffled.slot_of(k);
  }
  EXPECT_GT(moved, 56) << "the slots depend on the secret key, not on the address alone";
}

// A simulated link driven the way UdpService::pump drives the queue: each tick the server may send
// `budget` bytes; a sender with nothing left leaves the ring.
struct Link {
  FairQueue<int> queue{130000};
  std::map<int, double> left;  // bytes each sender still has (a large number: greedy)
  std::map<int, double> got;
  void tick(double budget, double send = 1456) {
    while (!queue.empty()) {
      const int id = queue.front();
      if (left[id] <= 0) {
        queue.pop();
        continue;
      }
      if (queue.allowance() < send) {
        queue.rotate();
        continue;
      }
      if (budget < send) return;  // the server's budget: the turn goes on next tick
      queue.spend(send);
      budget -= send;
      left[id] -= send;
      got[id] += send;
    }
  }
};

TEST(FairQueue, TwoGreedyAddressesAndAnHonestOneEachGetAThird) {
  Link link;
  link.left = {{1, 1e12}, {2, 1e12}, {3, 600'000}};
  for (int id : {1, 2, 3}) link.queue.push(id);  // the greedy ones first, as they came first
  for (int t = 0; t < 15; ++t) link.tick(100'000);
  // 1.5 MB sent: 500 kB each, within a quantum (130 kB) and a datagram.
  for (int id : {1, 2, 3}) EXPECT_NEAR(link.got[id], 500'000, 130'000 + 1456) << "address " << id;
  for (int t = 0; t < 10; ++t) link.tick(100'000);
  EXPECT_GE(link.got[3], 600'000) << "the honest address got all it asked for";
  EXPECT_NEAR(link.got[1], link.got[2], 130'000 + 1456) << "and the greedy ones split the rest";
}

TEST(FairQueue, ALateComerWaitsAtMostOneRound) {
  Link link;
  link.left = {{1, 1e12}, {2, 1e12}, {3, 1e12}, {4, 1456}};
  for (int id : {1, 2, 3}) link.queue.push(id);
  link.tick(50'000);
  link.queue.push(4);
  // Three turns of at most a quantum each stand before it.
  link.tick(3 * 130'000 + 1456);
  EXPECT_EQ(link.got[4], 1456);
}

TEST(FairQueue, TheOrderOfTurns) {
  // Table: quantum 3000, sends of 1000: each turn is three sends; leftover deficit carries over.
  FairQueue<char> q(3000);
  q.push('a');
  q.push('b');
  std::string order;
  for (int i = 0; i < 12; ++i) {
    while (q.allowance() < 1000) q.rotate();
    order += q.front();
    q.spend(1000);
  }
  EXPECT_EQ(order, "aaabbbaaabbb");
  // A sender that leaves forgets its deficit; one that stays keeps it.
  FairQueue<char> r(2500);
  r.push('x');
  r.push('y');
  std::string turns;
  for (int i = 0; i < 10; ++i) {
    while (r.allowance() < 1000) r.rotate();
    turns += r.front();
    r.spend(1000);
  }
  EXPECT_EQ(turns, "xxyyxxxyyy") << "2500 a turn: 2, then 3 (500 left over + 2500)";
}

std::shared_ptr<UdpRegions> regions() {
  auto r = std::make_shared<UdpRegions>();
  r->generation = 3;
  r->catalog.assign(5000, 1);
  static const std::vector<std::uint8_t> movie(100'000, 2);
  r->movies[proto::name_hash("m.ts")] = {movie, {}, nullptr, nullptr};
  return r;
}

proto::WriteRecordRequest catalog_request(std::uint64_t rate_bps) {
  proto::WriteRecordRequest r;
  r.session_id = 1;
  r.epoch = 1;
  r.record_seq = 7;
  r.region = proto::WriteRecordRegion::catalog;
  r.length = 1000;
  r.buffer_length = 1000;
  r.max_payload = 1400;
  r.rate_bps = rate_bps;
  return r;
}

TEST(AdmitUdp, ARateUnderTheFloorIsRefusedSayingTheFloor) {
  const auto g = regions();
  const UdpLimits limits{16u << 20, 8192, 1'000'000};
  struct Case {
    std::uint64_t rate;
    bool admitted;
  } cases[] = {{1, false}, {999'999, false}, {1'000'000, true}, {10'000'000'000ull, true}};
  for (const Case& c : cases) {
    const UdpDecision d = admit_udp(catalog_request(c.rate), g, limits);
    EXPECT_EQ(std::holds_alternative<UdpJob>(d), c.admitted) << c.rate;
    if (const auto* e = std::get_if<proto::WriteRecordError>(&d)) {
      EXPECT_EQ(e->code, proto::RejectCode::malformed_request);
      EXPECT_EQ(e->record_seq, 7u);
      EXPECT_NE(e->reason.find("floor, 1 Mbit/s"), std::string::npos) << e->reason;
      EXPECT_LE(e->reason.size(), proto::kWriteRecordReasonMax) << e->reason;
    }
  }
}

TEST(AdmitUdp, ACatalogJobOwnsItsGeneration) {
  std::shared_ptr<const UdpRegions> g = regions();
  const UdpRegions* raw = g.get();
  UdpDecision d = admit_udp(catalog_request(1'000'000), g, {});
  ASSERT_TRUE(std::holds_alternative<UdpJob>(d));
  UdpJob job = std::get<UdpJob>(std::move(d));
  g.reset();  // a new generation was published: the service drops its reference
  ASSERT_TRUE(job.owner);
  EXPECT_EQ(job.owner.get(), static_cast<const void*>(raw)) << "the job keeps the generation its bytes are in";
  EXPECT_EQ(job.bytes.data(), raw->catalog.data());
}

TEST(JobDeadline, TwiceTheWireTimePlusGraceAtMostTheMaximum) {
  const auto t0 = Clock::now();
  const JobLife life{2000ms, 30000ms};
  struct Case {
    std::uint64_t bytes;
    double rate_bps;
    std::chrono::milliseconds after;
  } cases[] = {
      {1'000'000, 8e6, 4000ms},     // 1 s on the wire: 2 s + 2 s
      {256 * 1024, 400e6, 2010ms},  // 5 ms on the wire (rounded to the ms)
      {16u << 20, 1e6, 30000ms},    // 134 s at the floor: the cap
      {1000, 0, 30000ms},           // no rate: the cap
  };
  for (const Case& c : cases) {
    const auto d = job_deadline(t0, c.bytes, c.rate_bps, life);
    const double ms = std::chrono::duration<double, std::milli>(d - t0).count();
    EXPECT_NEAR(ms, static_cast<double>(c.after.count()), 1.0) << c.bytes << " at " << c.rate_bps;
  }
}

TEST(DatagramsPerSend, NeverZeroWhileTheBudgetCoversOneDatagram) {
  struct Case {
    std::uint32_t payload;
    double budget;
    std::uint64_t left;
    bool gso;
    std::size_t want;
  } cases[] = {
      {1400, 1e9, 1 << 20, true, 44},                                 // 65000 / 1456: the train's byte limit
      {1400, std::numeric_limits<double>::max(), 1 << 20, true, 44},  // an unlimited budget (was undefined behaviour)
      {1000, 1e9, 1 << 20, true, 61},                                 // 65000 / 1056
      {500, 1e9, 1 << 20, true, 64},                                  // the segment limit
      {1400, 3 * 1456 + 10, 1 << 20, true, 3},                        // the budget
      {1400, 1e9, 3000, true, 3},                                     // what is left: 1400 + 1400 + 200
      {1400, 1455, 1 << 20, true, 0},                                 // the budget is short of one datagram
      {1400, 1e9, 1 << 20, false, 1},                                 // no GSO: one a send
      {32444, 1e9, 1 << 20, true, 2},                                 // two of 32500 fit a train
      {32445, 1e9, 1 << 20, true, 1},                                 // these do not: one a train
      {64945, 1e9, 1 << 20, true, 1},                                 // over 65000 with its header: still one (was 0: never sent)
      {65451, 1e9, 1 << 20, true, 1},                                 // the largest payload there is
      {1400, 1e9, 0, true, 0},                                        // nothing left
  };
  for (const Case& c : cases)
    EXPECT_EQ(datagrams_per_send(c.payload, c.budget, c.left, c.gso), c.want)
        << c.payload << " " << c.budget << " " << c.left << " " << c.gso;
}

}  // namespace
}  // namespace vod::server::udp
