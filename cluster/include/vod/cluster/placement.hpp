// SPDX-License-Identifier: LGPL-2.1-or-later
// Placement: which fleet members serve a movie, in which order. Pure functions (table tests in
// tests/unit/placement_test.cpp).
//
// Weighted rendezvous (highest random weight) hashing: each member scores
//     score = -weight / ln(u),  u = (h + 0.5) / 2^53,  h = the first 53 bits of
//     SHA-256(movie NUL member-id), big-endian
// and the movie's order is the members by falling score. A member that joins takes from each
// other member only the movies it now scores highest for; one that leaves gives away only its own.
// The hash is written out so that any implementation can compute the same order.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vod::cluster {

struct Candidate {
  std::string id;  // host:port
  double weight = 1;
};

// In (0, 1): the uniform draw for (key, member).
double rendezvous_draw(std::string_view key, std::string_view member_id);
double rendezvous_score(std::string_view key, std::string_view member_id, double weight);

// Indexes into `members`, best first. Ties (equal scores) fall back to the id, so the order is total.
std::vector<std::size_t> rendezvous_order(std::string_view key, std::span<const Candidate> members);

// The order one client uses for a movie placed on the top `k` members (k >= 1): the top k first,
// starting at the one that the hash of the movie and the client's id picks, so that viewers of a
// popular movie spread over its k servers; then the rest in rendezvous order, for failover.
std::vector<std::size_t> placement_order(std::string_view movie, std::span<const Candidate> members, unsigned k, std::uint64_t client_id);

// What a member carries now and what it can: its sessions (RDMA connections and UDP sessions, as
// its record counts them, plus the opens this client made there since that record was read) and
// its capacity (its weight).
struct MemberLoadView {
  double sessions = 0;
  double capacity = 1;
};

// Consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam, 2017) over an order
// of `members` (indexes, best first): a member that this open would take past
//     ceil((1 + epsilon) x (the fleet's sessions + 1) x its capacity / the fleet's capacity)
// is full. The full ones go after the others, each group in the order it had: a movie moves off its
// first member only while that one is over its bound, and a failover still reaches every member.
// epsilon <= 0: no bound (the order as it is).
std::vector<std::size_t> bounded_load_order(std::vector<std::size_t> order, std::span<const MemberLoadView> members, double epsilon);

}  // namespace vod::cluster
