// SPDX-License-Identifier: LGPL-2.1-or-later
// Placement (cluster/placement.hpp): weighted rendezvous order, its stability when members join and
// leave, its balance, and top-k spreading by client id.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>

#include "vod/cluster/placement.hpp"

namespace vod::cluster {
namespace {

std::vector<Candidate> members(int n, double weight = 1) {
  std::vector<Candidate> out;
  for (int i = 0; i < n; ++i) out.push_back({"192.0.2." + std::to_string(i + 1) + ":7470", weight});
  return out;
}

std::string first(std::string_view movie, const std::vector<Candidate>& m) { return m[rendezvous_order(movie, m).front()].id; }

TEST(Placement, DrawIsInTheOpenUnitIntervalAndStable) {
  for (int i = 0; i < 1000; ++i) {
    const double u = rendezvous_draw("movie-" + std::to_string(i), "192.0.2.1:7470");
    EXPECT_GT(u, 0.0);
    EXPECT_LT(u, 1.0);
  }
  EXPECT_EQ(rendezvous_draw("a.mp4", "m1"), rendezvous_draw("a.mp4", "m1"));
  EXPECT_NE(rendezvous_draw("a.mp4", "m1"), rendezvous_draw("a.mp4", "m2"));
  // The documented hash: SHA-256("a.mp4\0m1"), its first 53 bits, as Python's hashlib computes it:
  // int.from_bytes(sha256(b"a.mp4\x00m1").digest()[:8], "big") >> 11. A change here moves every movie.
  EXPECT_DOUBLE_EQ(rendezvous_draw("a.mp4", "m1"), 0.1773048301742191);
}

TEST(Placement, OrderIsAPermutationAndDeterministic) {
  const auto m = members(5);
  const auto a = rendezvous_order("x.mp4", m), b = rendezvous_order("x.mp4", m);
  EXPECT_EQ(a, b);
  EXPECT_EQ(std::set<std::size_t>(a.begin(), a.end()).size(), 5u);
  EXPECT_TRUE(rendezvous_order("x.mp4", {}).empty());
}

TEST(Placement, OrderDoesNotDependOnListOrder) {
  auto m = members(4);
  const std::string before = first("film.mkv", m);
  std::reverse(m.begin(), m.end());
  EXPECT_EQ(first("film.mkv", m), before);
}

TEST(Placement, AJoiningMemberTakesOnlyWhatItNowWins) {
  const auto three = members(3), four = members(4);
  int moved = 0;
  for (int i = 0; i < 1000; ++i) {
    const std::string movie = "title-" + std::to_string(i);
    const std::string a = first(movie, three), b = first(movie, four);
    if (a != b) {
      ++moved;
      EXPECT_EQ(b, four[3].id) << movie << " moved between old members";
    }
  }
  EXPECT_NEAR(moved, 250, 60);  // ideal 1/4
}

TEST(Placement, ALeavingMemberGivesAwayOnlyItsOwn) {
  const auto four = members(4);
  const std::vector<Candidate> three(four.begin(), four.begin() + 3);
  for (int i = 0; i < 1000; ++i) {
    const std::string movie = "title-" + std::to_string(i);
    const std::string before = first(movie, four);
    if (before != four[3].id) {
      EXPECT_EQ(first(movie, three), before) << movie;
    }
  }
}

TEST(Placement, BalanceFollowsWeights) {
  struct Case {
    std::vector<double> weights;
  };
  for (const Case& c : {Case{{1, 1, 1}}, Case{{1, 1, 1, 1}}, Case{{1, 2, 1}}, Case{{1, 3}}}) {
    std::vector<Candidate> m;
    double total = 0;
    for (std::size_t i = 0; i < c.weights.size(); ++i) {
      m.push_back({"10.0.0." + std::to_string(i + 1) + ":7470", c.weights[i]});
      total += c.weights[i];
    }
    std::map<std::string, int> count;
    const int n = 6000;
    for (int i = 0; i < n; ++i) ++count[first("movie-" + std::to_string(i), m)];
    for (std::size_t i = 0; i < m.size(); ++i) EXPECT_NEAR(count[m[i].id], n * c.weights[i] / total, n * 0.03) << m[i].id;
  }
}

TEST(Placement, TopKSpreadsClientsAndKeepsTheRestForFailover) {
  const auto m = members(5);
  const auto plain = rendezvous_order("hit.mp4", m);
  std::map<std::size_t, int> firsts;
  for (std::uint64_t client = 1; client <= 300; ++client) {
    const auto order = placement_order("hit.mp4", m, 3, client);
    ASSERT_EQ(order.size(), 5u);
    // The top 3, in some rotation, then the other two as rendezvous orders them.
    EXPECT_EQ(std::set<std::size_t>(order.begin(), order.begin() + 3), std::set<std::size_t>(plain.begin(), plain.begin() + 3));
    EXPECT_EQ(order[3], plain[3]);
    EXPECT_EQ(order[4], plain[4]);
    ++firsts[order[0]];
  }
  ASSERT_EQ(firsts.size(), 3u);
  for (const auto& [member, n] : firsts) EXPECT_NEAR(n, 100, 35);
  EXPECT_EQ(placement_order("hit.mp4", m, 1, 42), plain);
  EXPECT_EQ(placement_order("hit.mp4", m, 0, 42), plain);       // k 0 is 1
  EXPECT_EQ(placement_order("hit.mp4", m, 99, 42).size(), 5u);  // k beyond the members: all of them
}

// Bounded loads: a table of (order, sessions and capacities, epsilon) -> the order used.
TEST(Placement, BoundedLoadsMoveOnlyTheOverflow) {
  struct Row {
    const char* what;
    std::vector<std::size_t> order;
    std::vector<MemberLoadView> members;
    double epsilon;
    std::vector<std::size_t> want;
  };
  const std::vector<Row> rows = {
      {"an empty fleet: the order as it is", {0, 1, 2}, {{0, 1}, {0, 1}, {0, 1}}, 0.15, {0, 1, 2}},
      // 12 sessions + 1 over 3 equal members: a bound of ceil(1.15 x 13 / 3) = 5 each.
      {"the first member at its bound: it keeps the open (4 + 1 <= 5)", {0, 1, 2}, {{4, 1}, {4, 1}, {4, 1}}, 0.15, {0, 1, 2}},
      {"the first member past its bound goes last, the others keep their order", {2, 0, 1}, {{3, 1}, {1, 1}, {8, 1}}, 0.15, {0, 1, 2}},
      {"two full members: both after the one with room, in their order", {1, 2, 0}, {{0, 1}, {6, 1}, {6, 1}}, 0.15, {0, 1, 2}},
      // Capacity 2 of 4 in all: a bound of ceil(1.15 x 9 x 2 / 4) = 6 for member 0, 3 for the others.
      {"a member of twice the capacity takes twice the sessions", {0, 1, 2}, {{5, 2}, {1, 1}, {2, 1}}, 0.15, {0, 1, 2}},
      {"... and past that it is full", {0, 1, 2}, {{6, 2}, {1, 1}, {1, 1}}, 0.15, {1, 2, 0}},
      // The same loads with epsilon 0.25 and 0.15: 9 sessions + 1 over 2, bounds 7 and 6.
      {"epsilon 0.25 leaves room that 0.15 does not", {0, 1}, {{6, 1}, {3, 1}}, 0.25, {0, 1}},
      {"epsilon 0.15", {0, 1}, {{6, 1}, {3, 1}}, 0.15, {1, 0}},
      {"epsilon 0: no bound", {0, 1}, {{50, 1}, {0, 1}}, 0, {0, 1}},
      {"a member of no capacity is always full", {0, 1}, {{0, 0}, {0, 1}}, 0.15, {1, 0}},
  };
  for (const Row& r : rows) {
    EXPECT_EQ(bounded_load_order(r.order, r.members, r.epsilon), r.want) << r.what;
  }
}

// With many opens of one popular movie, bounded loads keep every member within (1 + epsilon) of
// the average (rounded up), where plain rendezvous puts them all on one member.
TEST(Placement, BoundedLoadsKeepEveryMemberNearTheAverage) {
  const auto m = members(5);
  std::vector<MemberLoadView> load(m.size());
  for (int open = 0; open < 1000; ++open) {
    const auto order = bounded_load_order(rendezvous_order("popular.ts", m), load, 0.15);
    load[order.front()].sessions += 1;
  }
  for (const MemberLoadView& l : load) EXPECT_LE(l.sessions, std::ceil(1.15 * 1000 / 5)) << "a member over its bound";
  EXPECT_EQ(load[rendezvous_order("popular.ts", m).front()].sessions, std::ceil(1.15 * 1000 / 5));  // the first fills to its bound
}

}  // namespace
}  // namespace vod::cluster
