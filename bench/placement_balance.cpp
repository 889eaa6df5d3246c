// SPDX-License-Identifier: LGPL-2.1-or-later
// placement-balance: how weighted rendezvous placement (cluster/placement.hpp) spreads a library
// over a fleet, and what moves when a member joins or leaves. Pure arithmetic on the real placement
// code, so the figures are exact for the names used, not samples of a timing.
//   - movies and viewers per member against the ideal, for N movies over 3 and 4 equal members;
//     viewers choose movies by Zipf's law (s = 1), so a member with a popular title carries more;
//   - the same with the 10 most popular titles spread over their top 2 members (k = 2);
//   - the same viewers placed with bounded loads (cluster::bounded_load_order, epsilon 0.15 as
//     clients use by default): opens arrive in a shuffled order from P client processes, each seeing
//     the members' loads as their records said at the last refresh (every R opens: records are up to
//     a second old) plus the opens it made itself since, as libvodclient counts them;
//   - the share of movies whose first member changes when a 4th joins and when one of 4 leaves,
//     against the ideal 1/4, and whether any moved between members that stayed.
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "vod/cluster/placement.hpp"
#include "vod/zipf.hpp"

namespace {

using vod::cluster::Candidate;

std::vector<Candidate> fleet(int n) {
  std::vector<Candidate> out;
  for (int i = 0; i < n; ++i) out.push_back({"192.0.2." + std::to_string(i + 1) + ":7470", 1.0});
  return out;
}

std::string movie(int i) {
  char name[32];
  std::snprintf(name, sizeof name, "title-%03d.mp4", i);
  return name;
}

void balance(int members, int movies, int viewers, unsigned popular_k) {
  const auto f = fleet(members);
  std::vector<double> movie_count(members), viewer_count(members);
  for (int i = 0; i < movies; ++i) movie_count[vod::cluster::rendezvous_order(movie(i), f).front()] += 1;
  for (int v = 0; v < viewers; ++v) {
    const double u = (v + 0.5) / viewers;  // evenly spaced draws: the Zipf mix itself, not a sample of it
    const int rank = static_cast<int>(vod::zipf_rank(static_cast<std::size_t>(movies), 1.0, u));
    const unsigned k = rank < 10 ? popular_k : 1;
    viewer_count[vod::cluster::placement_order(movie(rank), f, k, static_cast<std::uint64_t>(v) + 1).front()] += 1;
  }
  double max_movies = 0, max_viewers = 0;
  std::printf("%d movies over %d members, %d Zipf viewers%s:\n", movies, members, viewers, popular_k > 1 ? ", top 10 titles on k=2" : "");
  for (int m = 0; m < members; ++m) {
    std::printf("  %-16s movies %4.0f (ideal %5.1f)  viewers %5.0f (ideal %6.1f)\n", f[m].id.c_str(), movie_count[m],
                double(movies) / members, viewer_count[m], double(viewers) / members);
    max_movies = std::max(max_movies, movie_count[m]);
    max_viewers = std::max(max_viewers, viewer_count[m]);
  }
  std::printf("RESULT placement_balance members=%d k_popular=%u max_movies_over_ideal=%.2f max_viewers_over_ideal=%.2f\n", members,
              popular_k, max_movies / (double(movies) / members), max_viewers / (double(viewers) / members));
}

// Bounded loads over `members` equal members: viewers (Zipf over `movies`) arrive in a fixed shuffled
// order from `processes` client processes; the loads each sees are the records' (refreshed every
// `refresh` opens) plus its own opens since.
void bounded(int members, int movies, int viewers, double epsilon, int processes, int refresh) {
  const auto f = fleet(members);
  std::vector<int> arrival(static_cast<std::size_t>(viewers));
  for (int v = 0; v < viewers; ++v) arrival[static_cast<std::size_t>(v)] = v;
  std::uint64_t x = 0x9E3779B97F4A7C15ull;  // a fixed shuffle (xorshift), so the figure is the same every run
  for (std::size_t i = arrival.size(); i > 1; --i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::swap(arrival[i - 1], arrival[x % i]);
  }
  std::vector<double> actual(static_cast<std::size_t>(members)), seen(actual.size());
  std::vector<std::vector<double>> own(static_cast<std::size_t>(processes), std::vector<double>(actual.size()));
  int moved = 0;
  for (int n = 0; n < viewers; ++n) {
    if (n % refresh == 0) {  // the records caught up: every process reads them again
      seen = actual;
      for (auto& o : own) std::fill(o.begin(), o.end(), 0);
    }
    const int v = arrival[static_cast<std::size_t>(n)];
    const double u = (v + 0.5) / viewers;
    const int rank = static_cast<int>(vod::zipf_rank(static_cast<std::size_t>(movies), 1.0, u));
    auto& mine = own[static_cast<std::size_t>(n % processes)];
    std::vector<vod::cluster::MemberLoadView> loads;
    for (std::size_t m = 0; m < actual.size(); ++m) loads.push_back({seen[m] + mine[m], 1.0});
    auto order = vod::cluster::placement_order(movie(rank), f, 1, static_cast<std::uint64_t>(v) + 1);
    const std::size_t first = order.front();
    order = vod::cluster::bounded_load_order(std::move(order), loads, epsilon);
    moved += order.front() != first;
    actual[order.front()] += 1;
    mine[order.front()] += 1;
  }
  const double most = *std::max_element(actual.begin(), actual.end());
  std::printf("%d Zipf viewers over %d members with bounded loads (epsilon %.2f), %d processes, records every %d opens:", viewers, members,
              epsilon, processes, refresh);
  for (double a : actual) std::printf(" %.0f", a);
  std::printf("\nRESULT placement_bounded members=%d epsilon=%.2f processes=%d refresh=%d max_viewers_over_ideal=%.2f moved=%.3f\n",
              members, epsilon, processes, refresh, most / (double(viewers) / members), double(moved) / viewers);
}

void movement(int movies) {
  const auto four = fleet(4);
  const std::vector<Candidate> three(four.begin(), four.begin() + 3);
  int joined = 0, left = 0, between_old = 0;
  for (int i = 0; i < movies; ++i) {
    const auto a = three[vod::cluster::rendezvous_order(movie(i), three).front()].id;
    const auto b = four[vod::cluster::rendezvous_order(movie(i), four).front()].id;
    if (a != b) {
      ++joined;
      if (b != four[3].id) ++between_old;
    }
  }
  // One of four leaves: the same pair of fleets seen the other way round.
  left = joined;
  std::printf("RESULT placement_movement movies=%d join_moved=%.3f leave_moved=%.3f ideal=0.250 moved_between_staying_members=%d\n", movies,
              double(joined) / movies, double(left) / movies, between_old);
}

}  // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  int movies = 100, viewers = 1000;
  po::options_description d("placement-balance: weighted rendezvous placement's balance and movement\n\noptions");
  d.add_options()("help,h", "show this help")("movies", po::value(&movies)->default_value(movies), "library size")(
      "viewers", po::value(&viewers)->default_value(viewers), "viewers choosing by Zipf's law");
  po::variables_map vm;
  po::store(po::parse_command_line(argc, argv, d), vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << d;
    return 0;
  }
  if (movies < 1 || viewers < 1) {
    std::fprintf(stderr, "placement-balance: --movies and --viewers must be at least 1\n");
    return 2;
  }
  for (int members : {3, 4}) balance(members, movies, viewers, 1);
  for (int members : {3, 4}) balance(members, movies, viewers, 2);
  // 1000 opens in about 10 s from 10 processes: records refreshed every 100 opens (a second), or,
  // harder, every 250; and one process alone.
  for (int refresh : {100, 250}) bounded(4, movies, viewers, 0.15, 10, refresh);
  bounded(4, movies, viewers, 0.15, 1, 100);
  movement(movies);
  movement(10000);
  return 0;
}
