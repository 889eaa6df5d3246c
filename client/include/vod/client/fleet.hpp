// SPDX-License-Identifier: LGPL-2.1-or-later
// A fleet of vod-servers as one service (rdma+etcd:// URIs, docs/operations.md "A fleet"): which
// members serve a movie or a live channel, in which order, and the fleet's catalog.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "vod/client/errors.hpp"
#include "vod/client/session.hpp"
#include "vod/client/uri.hpp"
#include "vod/cluster/member_directory.hpp"

namespace vod::client {

struct PlacedMember {
  Uri uri;  // rdma://member/movie, with the fleet URI's token
  cluster::MemberRecord record;
};

// The members of a fleet URI's fleet for its movie (weighted rendezvous order; a movie spread over
// k members starts at the one this client's id picks; then bounded loads, ClusterRef::load_epsilon,
// move the members over their bound after the others), its live channel (the members that list
// it, bounded the same way), or its catalog (spread over all). `lost_member` (an id, host:port) goes last. Throws
// ClientError(server_unreachable) when etcd cannot be read and no member list was kept.
std::vector<PlacedMember> fleet_order(const Uri& fleet, cluster::MemberDirectory& directory, std::uint64_t client_id,
                                      const std::string& lost_member = {});
std::vector<PlacedMember> fleet_order(const Uri& fleet, std::uint64_t client_id = 0, const std::string& lost_member = {});

// Counts an open this process made on a member (its id, host:port), for the bounded loads of the
// placements that follow until the member's record shows it.
void note_fleet_open(const std::string& member_id);

// Whether another member may do what this one refused: unreachable, full, source limit, unknown
// movie, shutting down.
bool try_next_member(const ClientError& e) noexcept;

// What the members tried said, when one refused or failed (first_accepting).
struct MemberTries {
  std::string refusals;     // each member's reason, "; " between them
  bool all_unknown = true;  // every member said it does not have the movie
  bool changed = false;     // a member has another version of it (movie_changed)
};

// The one loop over a placement order: calls `attempt` on each member in turn until one returns,
// and returns its place in `order`. A refusal another member may not give (try_next_member), another
// version (movie_changed) or a lost connection moves on to the next, logged, noted in `tries`, after
// `after_failure`; anything else propagates. Nothing when no member accepted. `what` names what is
// opened, for the log ("'movie.mp4'", "live channel 'cam'").
std::optional<std::size_t> first_accepting(const std::vector<PlacedMember>& order, const std::string& what, MemberTries& tries,
                                           const std::function<void(const PlacedMember&)>& attempt,
                                           const std::function<void()>& after_failure = {});

// This process's client id (random, drawn once), unless `id` is not 0.
std::uint64_t client_id_or_default(std::uint64_t id);

// The catalogs of every member, merged by name (the member first in id order describes a name that
// several serve). Generations: their sum, so that any member's rescan changes it. Members that do
// not answer are named in `unreachable` and left out; throws ClientError when none answers.
proto::Catalog read_fleet_catalog(const Uri& fleet, const SessionOptions& options, std::vector<std::string>* unreachable = nullptr);

}  // namespace vod::client
