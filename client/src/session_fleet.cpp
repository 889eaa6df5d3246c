// SPDX-License-Identifier: LGPL-2.1-or-later
// A session in a fleet (rdma+etcd:// URIs): the movie's members in placement order (fleet.hpp), the
// first that accepts. A refusal that another member may not give (server full, source limit,
// unknown movie, shutting down) or a connect that fails moves on to the next; a reconnect after a
// lost connection tries the member it lost last, and a member with another version of the movie
// (its content identity) the next. Everything else (resuming at the reader's position only onto the
// version it was reading) is as with one server.
#include "vod/client/fleet.hpp"
#include "vod/client/session.hpp"
#include "vod/log.hpp"

namespace vod::client {

namespace {

std::string ordinal(std::size_t i) {
  static const char* suffix[] = {"th", "st", "nd", "rd"};
  return std::to_string(i) + (i % 100 / 10 == 1 || i % 10 > 3 ? suffix[0] : suffix[i % 10]);
}

}  // namespace

std::string Session::member_id() const {
  cluster::MemberRecord r;
  r.host = uri_.host;
  r.port = uri_.port;
  return r.id();
}

void Session::connect_in_fleet() {
  if (!fleet_) fleet_ = cluster::MemberDirectory::shared(uri_.cluster->etcd);
  Uri wanted = uri_;
  if (movie_) wanted.movie = movie_->name;
  const std::string name = wanted.movie.value_or("");
  const std::string what = name.empty() ? std::string("the catalog") : (uri_.live ? "live channel '" : "'") + name + "'";
  const auto order = fleet_order(wanted, *fleet_, options_.client_id, lost_member_);
  MemberTries tries;
  const auto n = first_accepting(order, what, tries, [&](const PlacedMember& m) {
    uri_.host = m.uri.host;
    uri_.port = m.uri.port;
    connect_to_server();
  });
  if (n) {
    const auto& m = order[*n];
    if (!name.empty()) note_fleet_open(m.record.id());
    log::info("cluster",
              what + " on " + m.record.id() + " (" + ordinal(*n + 1) + " of " + std::to_string(order.size()) + " in its placement order)");
    return;
  }
  // A member that has another version answered, and none has this one: stop rather than wait.
  throw ClientError(tries.changed       ? ErrorKind::movie_changed
                    : tries.all_unknown ? ErrorKind::unknown_movie
                                        : ErrorKind::server_unreachable,
                    "no member of " + uri_.cluster->etcd.to_string() + " could serve " + what + ": " + tries.refusals);
}

}  // namespace vod::client
