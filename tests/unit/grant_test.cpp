// SPDX-License-Identifier: LGPL-2.1-or-later
// A connection's grant (issue 29, items 4 and 5): counted against its address while it exists and
// given back however it ends (destroyed, moved from, released while draining, dropped by an
// exception), and its token's expiry as a deadline, which the connection arms a timer of its own at.
#include <gtest/gtest.h>

#include <stdexcept>

#include "auth/client_address.hpp"
#include "auth/grant.hpp"
#include "vod/client/uri.hpp"
#include "vod/protocol/access_token.hpp"

namespace vod::server::auth {
namespace {

using Clock = Grant::Clock;
const proto::TokenAddress kA = *parse_address("192.0.2.1");

proto::AccessToken token_expiring(std::uint32_t expires) {
  proto::AccessToken t;
  t.expires = expires;
  return t;
}

TEST(Grant, CountsItsAddressUntilItGoesByAnyPath) {
  SourceLimits limits({0, 1, 3});
  const auto now = Clock::now();
  {
    Grant g(limits, {kA, std::nullopt, "a"}, 1000, now);
    EXPECT_EQ(limits.connections(kA), 1u);
    Grant moved = std::move(g);
    EXPECT_EQ(limits.connections(kA), 1u) << "a move hands it on, it does not count twice";
    EXPECT_FALSE(g.held());
    moved.release();  // a live viewer retired, still draining
    EXPECT_EQ(limits.connections(kA), 0u);
    moved.release();
    EXPECT_EQ(limits.connections(kA), 0u) << "released once only";
  }
  EXPECT_EQ(limits.connections(kA), 0u);
  // A setup that throws after the grant was made (a failed bind or accept) gives it back.
  try {
    Grant g(limits, {kA, std::nullopt, "a"}, 1000, now);
    EXPECT_EQ(limits.connections(kA), 1u);
    throw std::runtime_error("binding its memory windows failed");
  } catch (const std::runtime_error&) {}
  EXPECT_EQ(limits.connections(kA), 0u);
  // Assigning over a held grant gives the old one back.
  Grant a(limits, {kA, std::nullopt, "a"}, 1000, now);
  Grant b(limits, {kA, std::nullopt, "b"}, 1000, now);
  EXPECT_EQ(limits.connections(kA), 2u);
  a = std::move(b);
  EXPECT_EQ(limits.connections(kA), 1u);
  EXPECT_EQ(a.terms().peer, "b");
}

TEST(Grant, ATokenExpiryIsADeadline) {
  SourceLimits limits({0, 1, 0});
  const auto now = Clock::now();
  Grant none(limits, {kA, std::nullopt, "no token"}, 1000, now);
  EXPECT_FALSE(none.deadline()) << "no token, no deadline";
  Grant late(limits, {kA, token_expiring(1060), "60 s"}, 1000, now);
  Grant soon(limits, {kA, token_expiring(1015), "15 s"}, 1000, now);
  ASSERT_TRUE(soon.deadline());
  EXPECT_EQ(*soon.deadline(), now + std::chrono::seconds(15)) << "the wall clock's expiry on the steady clock";
  EXPECT_EQ(*late.deadline(), now + std::chrono::seconds(60));
  // A token that expired before the connect (clock skew): due at once.
  Grant past(limits, {kA, token_expiring(900), "past"}, 1000, now);
  EXPECT_EQ(*past.deadline(), now);
  // Moved, the deadline goes with it; released, the connection is going and so is its deadline.
  Grant moved = std::move(soon);
  EXPECT_FALSE(soon.deadline());
  EXPECT_EQ(*moved.deadline(), now + std::chrono::seconds(15));
  moved.release();
  EXPECT_FALSE(moved.deadline());
}

TEST(Grant, TheClientSaysTokenExpiredAndWhatToDo) {
  client::Uri uri = client::parse_uri("rdma://192.0.2.1/a.ts");
  EXPECT_FALSE(client::expired_token(uri, 2000)) << "no token";
  uri.token = proto::encode(token_expiring(1500));
  EXPECT_FALSE(client::expired_token(uri, 1499));
  const auto why = client::expired_token(uri, 1510);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("token expired 10 s ago"), std::string::npos) << *why;
  EXPECT_NE(why->find("vod-token"), std::string::npos) << *why;
}

}  // namespace
}  // namespace vod::server::auth
