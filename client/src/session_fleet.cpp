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
  std::string refusals;
  bool all_unknown = true, changed = false;
  for (std::size_t n = 0; n < order.size(); ++n) {
    const auto& m = order[n];
    uri_.host = m.uri.host;
    uri_.port = m.uri.port;
    try {
      connect_to_server();
      if (!name.empty()) note_fleet_open(m.record.id());
      log::info("cluster",
                what + " on " + m.record.id() + " (" + ordinal(n + 1) + " of " + std::to_string(order.size()) + " in its placement order)");
      return;
    } catch (const ClientError& e) {
      // Another version of the movie here: perhaps not on the next member.
      if (!try_next_member(e) && e.kind() != ErrorKind::movie_changed) throw;
      changed = changed || e.kind() == ErrorKind::movie_changed;
      all_unknown = all_unknown && e.kind() == ErrorKind::unknown_movie;
      refusals += std::string(refusals.empty() ? "" : "; ") + e.what();
      log::info("cluster", m.record.id() + " cannot serve " + what + " (" + e.what() + "), trying the next member");
    } catch (const ConnectionLost& e) {
      all_unknown = false;
      refusals += std::string(refusals.empty() ? "" : "; ") + m.record.id() + ": " + e.what();
    }
  }
  // A member that has another version answered, and none has this one: stop rather than wait.
  throw ClientError(changed       ? ErrorKind::movie_changed
                    : all_unknown ? ErrorKind::unknown_movie
                                  : ErrorKind::server_unreachable,
                    "no member of " + uri_.cluster->etcd.to_string() + " could serve " + what + ": " + refusals);
}

}  // namespace vod::client
