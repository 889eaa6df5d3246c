// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/fleet.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <random>

#include "vod/cluster/placement.hpp"
#include "vod/log.hpp"

namespace vod::client {

std::uint64_t client_id_or_default(std::uint64_t id) {
  static const std::uint64_t drawn = [] {
    std::random_device rd;
    return (static_cast<std::uint64_t>(rd()) << 32) | rd();
  }();
  return id ? id : drawn;
}

namespace {

// The opens this process made on each member lately: a bench of many viewers in one process (or a
// proxy opening for many) would otherwise see the same stale load for a second and pile onto one
// member. An open counts for kPendingFor, about how long a member's record takes to show it (its
// load measured, put at most once a second, and the watch); counting it a little longer than the
// record needs errs toward spreading. It used to stop counting at any change of the record, and a
// record measured before most of a burst of opens arrived then hid them (six bench processes of 15
// viewers put 1.6 x the average on one member).
class OwnOpens {
 public:
  static constexpr std::chrono::milliseconds kPendingFor{2000};
  static OwnOpens& instance() {
    static OwnOpens opens;
    return opens;
  }
  // Opens made on `r` lately, that its record may not show yet.
  unsigned pending(const cluster::MemberRecord& r) {
    const std::lock_guard lock(mutex_);
    auto it = opens_.find(r.id());
    if (it == opens_.end()) return 0;
    expire(it->second, Clock::now());
    return static_cast<unsigned>(it->second.size());
  }
  void opened(const std::string& id) {
    const std::lock_guard lock(mutex_);
    if (opens_.size() >= 4096 && !opens_.contains(id)) opens_.clear();  // bounded: members come and go
    auto& times = opens_[id];
    const auto now = Clock::now();
    expire(times, now);
    if (times.size() < kMaxPending) times.push_back(now);
  }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxPending = 65536;  // bounded: a process opening faster than this per 2 s counts no more
  static void expire(std::deque<Clock::time_point>& times, Clock::time_point now) {
    while (!times.empty() && now - times.front() > kPendingFor) times.pop_front();
  }
  std::mutex mutex_;
  std::map<std::string, std::deque<Clock::time_point>> opens_;
};

}  // namespace

void note_fleet_open(const std::string& member_id) { OwnOpens::instance().opened(member_id); }

bool try_next_member(const ClientError& e) noexcept {
  return e.kind() == ErrorKind::server_unreachable || e.kind() == ErrorKind::rejected || e.kind() == ErrorKind::unknown_movie;
}

std::optional<std::size_t> first_accepting(const std::vector<PlacedMember>& order, const std::string& what, MemberTries& tries,
                                           const std::function<void(const PlacedMember&)>& attempt,
                                           const std::function<void()>& after_failure) {
  const auto note = [&](const std::string& why) { tries.refusals += (tries.refusals.empty() ? "" : "; ") + why; };
  for (std::size_t n = 0; n < order.size(); ++n) {
    const PlacedMember& m = order[n];
    try {
      attempt(m);
      return n;
    } catch (const ClientError& e) {
      // Another version of the movie here: perhaps not on the next member.
      if (!try_next_member(e) && e.kind() != ErrorKind::movie_changed) throw;
      tries.changed = tries.changed || e.kind() == ErrorKind::movie_changed;
      tries.all_unknown = tries.all_unknown && e.kind() == ErrorKind::unknown_movie;
      note(e.what());
      log::info("cluster", m.record.id() + " cannot serve " + what + " (" + e.what() + "), trying the next member");
    } catch (const ConnectionLost& e) {
      tries.all_unknown = false;
      note(m.record.id() + ": " + e.what());
    }
    if (after_failure) after_failure();
  }
  return std::nullopt;
}

std::vector<PlacedMember> fleet_order(const Uri& fleet, cluster::MemberDirectory& directory, std::uint64_t client_id,
                                      const std::string& lost_member) {
  std::vector<cluster::MemberRecord> members;
  try {
    members = directory.members();
  } catch (const cluster::ClusterError& e) {
    throw ClientError(ErrorKind::server_unreachable, std::string("cannot find the fleet's members: ") + e.what());
  }
  const std::string name = fleet.movie.value_or("");
  if (fleet.live) {  // a live channel goes to the members that have it (to any, when none says so)
    std::vector<cluster::MemberRecord> with;
    for (auto& m : members)
      if (std::find(m.live.begin(), m.live.end(), name) != m.live.end()) with.push_back(m);
    if (!with.empty()) members = std::move(with);
  }
  if (members.empty())
    throw ClientError(ErrorKind::server_unreachable,
                      "no vod-server is registered in " + directory.etcd().to_string() + " (" + directory.source() + ")");
  std::vector<cluster::Candidate> candidates;
  unsigned k = fleet.cluster ? fleet.cluster->spread : 0;
  for (const auto& m : members) {
    candidates.push_back({m.id(), m.weight});
    if (fleet.cluster && !fleet.cluster->spread)
      if (auto it = m.spread.find(name); it != m.spread.end()) k = std::max(k, it->second);
  }
  if (name.empty() || fleet.live) k = static_cast<unsigned>(candidates.size());  // the catalog, a channel: any member that has it
  auto order = cluster::placement_order(name, candidates, std::max(k, 1u), client_id_or_default(client_id));
  if (!name.empty() && fleet.cluster) {  // a movie or a channel: bounded loads (the catalog is a short read anywhere)
    std::vector<cluster::MemberLoadView> loads;
    for (const auto& m : members) loads.push_back({static_cast<double>(m.load.sessions()) + OwnOpens::instance().pending(m), m.weight});
    const std::size_t first = order.front();
    order = cluster::bounded_load_order(std::move(order), loads, fleet.cluster->load_epsilon);
    if (order.front() != first)
      log::debug("cluster", "'" + name + "': " + candidates[first].id + " is over its bound (" +
                                std::to_string(static_cast<long long>(loads[first].sessions)) + " sessions), placed on " +
                                candidates[order.front()].id + " first");
  }
  if (!lost_member.empty())
    std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return candidates[i].id != lost_member; });
  std::vector<PlacedMember> out;
  for (std::size_t i : order) {
    PlacedMember p{fleet, members[i]};
    p.uri.cluster.reset();
    p.uri.host = members[i].host;
    p.uri.port = members[i].port;
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<PlacedMember> fleet_order(const Uri& fleet, std::uint64_t client_id, const std::string& lost_member) {
  if (!fleet.cluster) throw ClientError(ErrorKind::usage, fleet.to_string() + " names one server, not a fleet (rdma+etcd://)");
  const auto directory = cluster::MemberDirectory::shared(fleet.cluster->etcd);
  return fleet_order(fleet, *directory, client_id, lost_member);
}

proto::Catalog read_fleet_catalog(const Uri& fleet, const SessionOptions& options, std::vector<std::string>* unreachable) {
  Uri catalog_uri = fleet;
  catalog_uri.movie.reset();
  catalog_uri.live = false;
  auto members = fleet_order(catalog_uri, options.client_id);
  std::sort(members.begin(), members.end(), [](const PlacedMember& a, const PlacedMember& b) { return a.record.id() < b.record.id(); });
  proto::Catalog merged;
  // Titles name their movies by catalog index: kept here with the names, made indexes of the
  // merged catalog at the end. The first member (in id order) listing a title describes it.
  struct NamedTitle {
    proto::Title title;
    std::vector<std::string> renditions, tracks, track_renditions;  // names of the entries they index
  };
  std::vector<NamedTitle> titles;
  std::string errors;
  std::size_t answered = 0;
  for (const auto& m : members) {
    try {
      auto o = options;
      o.reconnect.give_up_after = std::chrono::milliseconds(0);  // a member that does not answer is left out, not waited for
      Session session(m.uri, o);
      const auto& c = session.catalog();
      merged.generation += c.generation;
      for (const auto& e : c.entries) {
        auto have =
            std::find_if(merged.entries.begin(), merged.entries.end(), [&](const proto::CatalogEntry& x) { return x.name == e.name; });
        if (have == merged.entries.end()) merged.entries.push_back(e);
        // Two members with different bytes under one name: the fleet has no one version of it.
        else if (!have->content.same(e.content) || have->size != e.size) have->content = {};
      }
      for (const proto::Title& t : c.titles) {
        if (std::any_of(titles.begin(), titles.end(), [&](const NamedTitle& n) { return n.title.name == t.name; })) continue;
        NamedTitle n{t, {}, {}, {}};
        for (const auto& r : t.renditions) n.renditions.push_back(c.entries.at(r.entry).name);
        for (const auto& k : t.tracks) {
          n.tracks.push_back(c.entries.at(k.entry).name);
          n.track_renditions.push_back(k.rendition == proto::kAllRenditions ? std::string() : c.entries.at(k.rendition).name);
        }
        titles.push_back(std::move(n));
      }
      ++answered;
    } catch (const ClientError& e) {
      if (unreachable) unreachable->push_back(m.record.id() + ": " + e.what());
      errors += std::string(errors.empty() ? "" : "; ") + e.what();
    }
  }
  if (!answered)
    throw ClientError(ErrorKind::server_unreachable, "no member of " + fleet.cluster->etcd.to_string() + " gave its catalog: " + errors);
  std::sort(merged.entries.begin(), merged.entries.end(),
            [](const proto::CatalogEntry& a, const proto::CatalogEntry& b) { return a.name < b.name; });
  const auto index_of = [&merged](const std::string& name) {
    const auto it = std::lower_bound(merged.entries.begin(), merged.entries.end(), name,
                                     [](const proto::CatalogEntry& e, const std::string& n) { return e.name < n; });
    return static_cast<std::uint32_t>(it - merged.entries.begin());  // present: every member's entries were merged
  };
  for (NamedTitle& n : titles) {
    for (std::size_t i = 0; i < n.renditions.size(); ++i) n.title.renditions[i].entry = index_of(n.renditions[i]);
    for (std::size_t i = 0; i < n.tracks.size(); ++i) {
      n.title.tracks[i].entry = index_of(n.tracks[i]);
      if (!n.track_renditions[i].empty()) n.title.tracks[i].rendition = index_of(n.track_renditions[i]);
    }
    merged.titles.push_back(std::move(n.title));
  }
  std::sort(merged.titles.begin(), merged.titles.end(), [](const proto::Title& a, const proto::Title& b) { return a.name < b.name; });
  return merged;
}

}  // namespace vod::client
