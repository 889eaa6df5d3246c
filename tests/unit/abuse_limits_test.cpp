// SPDX-License-Identifier: LGPL-2.1-or-later
// Per-address connect rate and connection limits, the revocation file, and where admission puts
// them: each refusal with its own reject code and a reason (no NIC needed).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "admission.hpp"
#include "auth/revocation_list.hpp"
#include "auth/source_limits.hpp"
#include "auth/token_authority.hpp"
#include "vod/protocol/name_hash.hpp"

namespace vod::server::auth {
namespace {

using Clock = SourceLimits::Clock;
const proto::TokenAddress kA = *parse_address("192.0.2.1");
const proto::TokenAddress kB = *parse_address("2001:db8::2");

TEST(SourceLimits, ConnectRatePerAddressWithABurst) {
  SourceLimits limits({2, 3, 0});
  const auto t0 = Clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limits.allow_connect(kA, t0)) << i;  // the burst
  EXPECT_FALSE(limits.allow_connect(kA, t0));
  EXPECT_TRUE(limits.allow_connect(kB, t0)) << "another address has its own bucket";
  EXPECT_FALSE(limits.allow_connect(kA, t0 + std::chrono::milliseconds(400)));
  EXPECT_TRUE(limits.allow_connect(kA, t0 + std::chrono::milliseconds(500))) << "2 per second: one more after 0.5 s";
  SourceLimits off({0, 1, 0});
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(off.allow_connect(kA, t0));
  EXPECT_EQ(off.tracked(), 0u) << "no limit, nothing remembered";
}

TEST(SourceLimits, ConnectionsCountedAndMemoryBounded) {
  SourceLimits limits({1, 1, 2, 8});
  limits.opened(kA);
  limits.opened(kA);
  EXPECT_EQ(limits.connections(kA), 2u);
  limits.closed(kA);
  EXPECT_EQ(limits.connections(kA), 1u);
  limits.closed(kA);
  limits.closed(kA);  // never below zero
  EXPECT_EQ(limits.connections(kA), 0u);
  // A flood from many addresses keeps at most max_tracked of them.
  const auto t0 = Clock::now();
  for (unsigned i = 0; i < 1000; ++i) {
    proto::TokenAddress a{};
    a[0] = 0x20;
    a[14] = static_cast<std::uint8_t>(i >> 8);
    a[15] = static_cast<std::uint8_t>(i);
    limits.allow_connect(a, t0);
    ASSERT_LE(limits.tracked(), 8u);
  }
  EXPECT_EQ(address_text(kA), "192.0.2.1");
  EXPECT_EQ(address_text(kB), "2001:db8::2");
}

TEST(RevocationList, KeysTokensAndClients) {
  std::map<std::uint8_t, std::vector<std::uint8_t>> keys{{1, std::vector<std::uint8_t>(32, 1)}, {2, std::vector<std::uint8_t>(32, 2)}};
  const TokenAuthority authority(keys);
  const auto t1 = authority.mint(1, proto::TokenScope::all, "", 2'000'000'000, std::nullopt);
  const auto t2 = authority.mint(2, proto::TokenScope::all, "", 2'000'000'000, std::nullopt);
  const auto t2b = authority.mint(2, proto::TokenScope::movie, "a", 2'000'000'000, std::nullopt);
  const std::string path = ::testing::TempDir() + "/vod-revoked";
  std::ofstream(path) << "# revoked\nkey 1\ntoken " << proto::token_text(proto::encode(t2)) << "  # a leaked one\nclient 192.0.2.66\n";
  const auto list = RevocationList::load(path);
  EXPECT_EQ(list.size(), 3u);
  EXPECT_NE(list.revoked(t1, kA)->find("every token of key 1"), std::string::npos);
  EXPECT_NE(list.revoked(t2, kA)->find("revoked this token"), std::string::npos);
  EXPECT_EQ(list.revoked(t2b, kA), std::nullopt) << "another token of key 2";
  EXPECT_NE(list.revoked(std::nullopt, *parse_address("192.0.2.66"))->find("cut off client 192.0.2.66"), std::string::npos);
  EXPECT_EQ(list.revoked(std::nullopt, kA), std::nullopt);
  for (const auto& [text, want] :
       std::vector<std::pair<std::string, std::string>>{{"key 300\n", ":1: the key id '300'"},
                                                        {"token abc\n", ":1: the token is not 64 hex digits"},
                                                        {"client nowhere\n", ":1: 'nowhere' is not an IP address"},
                                                        {"\nuser bob\n", ":2: unknown entry 'user'"},
                                                        {"key\n", ":1: expected"}}) {
    std::ofstream(path) << text;
    try {
      RevocationList::load(path);
      FAIL() << text;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
  }
  std::remove(path.c_str());
}

TEST(AdmissionLimits, EachLimitHasItsCodeAndComesInOrder) {
  proto::Catalog c;
  c.generation = 1;
  proto::CatalogEntry e;
  e.name = "a.mp4";
  e.size = 10;
  e.movie = {4096, 10, 1};
  c.entries.push_back(e);
  proto::ConnectRequest r;
  r.kind = proto::RequestKind::movie;
  r.selector_type = proto::SelectorType::name_hash;
  r.selector = proto::name_hash("a.mp4");
  const auto bytes = proto::encode(r);
  AdmissionState s{c, 0, 10, false};
  s.peer = kA;
  EXPECT_TRUE(std::holds_alternative<Admit>(admit(bytes, s)));
  s.over_connect_rate = true;
  s.connect_rate = 5;
  auto no = std::get<Refuse>(admit(bytes, s));
  EXPECT_EQ(no.code, proto::RejectCode::rate_limited);
  EXPECT_NE(no.reason.find("192.0.2.1 connects more than 5 times a second"), std::string::npos) << no.reason;
  s.over_connect_rate = false;
  s.from_source = 3;
  s.max_per_source = 3;
  no = std::get<Refuse>(admit(bytes, s));
  EXPECT_EQ(no.code, proto::RejectCode::source_limit);
  EXPECT_NE(no.reason.find("3 connections from 192.0.2.1, the limit per address is 3"), std::string::npos) << no.reason;
  EXPECT_STREQ(proto::to_string(proto::RejectCode::source_limit), "source limit");
  s.connections = 10;  // the global limit is checked before the per-address one
  EXPECT_EQ(std::get<Refuse>(admit(bytes, s)).code, proto::RejectCode::server_full);
}

}  // namespace
}  // namespace vod::server::auth
