// SPDX-License-Identifier: LGPL-2.1-or-later
// vod-client cluster etcd://HOST[:PORT][/PREFIX] [NAME...]: a fleet's members as etcd lists them
// (records that fail to decode are logged and left out, as every client leaves them out), their
// load, and where each movie is placed: its members in weighted rendezvous order, the first k of
// which share its viewers.
#include <cstdio>
#include <iostream>

#include "commands.hpp"
#include "progress_bar.hpp"
#include "vod/client/fleet.hpp"
#include "vod/cluster/placement.hpp"

namespace vod::client::cli {

int run_cluster(const std::vector<std::string>& args) {
  namespace po = boost::program_options;
  CommonOptions common;
  auto opts = common_options(common);
  unsigned k = 0;
  opts.add_options()("k", po::value(&k)->default_value(0), "place every movie on its top K servers (0: what the member records say)");
  double epsilon = ClusterRef::kDefaultLoadEpsilon;
  opts.add_options()("epsilon", po::value(&epsilon)->default_value(epsilon, "0.15"),
                     "bounded loads' epsilon, as a client's ?epsilon=E (0: the rendezvous order alone, whatever the loads)");
  std::vector<std::string> positional;
  po::options_description hidden;
  hidden.add_options()("args", po::value(&positional)->composing());
  po::options_description help("General");
  help.add_options()("help,h", "show this help");
  po::options_description all;
  all.add(opts).add(help).add(hidden);
  po::positional_options_description pos;
  pos.add("args", -1);
  po::variables_map vm;
  const std::string usage = "vod-client cluster etcd://HOST[:PORT][/PREFIX] [NAME...]";
  try {
    po::store(po::command_line_parser(args).options(all).positional(pos).run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << opts << help << "\n";
      return exit_ok;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw ClientError(ErrorKind::usage, std::string(e.what()) + "\nusage: " + usage);
  }
  if (positional.empty() && common.cluster.empty()) throw ClientError(ErrorKind::usage, "missing the etcd:// URL\nusage: " + usage);
  if (common.cluster.empty()) {
    common.cluster = positional.front();
    positional.erase(positional.begin());
  }
  apply(common);
  if (k > cluster::kMaxSpread) throw ClientError(ErrorKind::usage, "--k must be 0.." + std::to_string(cluster::kMaxSpread));
  Uri fleet = command_uri("", common);
  fleet.cluster->spread = k;
  if (!(epsilon >= 0 && epsilon <= 10)) throw ClientError(ErrorKind::usage, "--epsilon must be 0..10");
  fleet.cluster->load_epsilon = epsilon;
  const auto directory = cluster::MemberDirectory::shared(fleet.cluster->etcd);
  std::vector<cluster::MemberRecord> members;
  try {
    members = directory->members();
  } catch (const cluster::ClusterError& e) {
    throw ClientError(ErrorKind::server_unreachable, e.what());
  }
  std::printf("fleet %s: %zu members, from %s\n", fleet.cluster->etcd.to_string().c_str(), members.size(), directory->source().c_str());
  std::printf("%-28s %8s %11s %12s %15s %12s %9s %10s %10s %s\n", "MEMBER", "WEIGHT", "CONNECTIONS", "UDP-SESSIONS", "MBIT/S(EST.)",
              "MBIT/S(UDP)", "NIC-GBIT", "CACHE", "GENERATION", "LIVE");
  for (const auto& m : members) {
    std::string live;
    for (const auto& c : m.live) live += (live.empty() ? "" : ",") + c;
    std::printf("%-28s %8.2f %11llu %12llu %15.2f %12.1f %9.0f %10s %10u %s\n", m.id().c_str(), m.weight,
                static_cast<unsigned long long>(m.load.connections), static_cast<unsigned long long>(m.load.udp_sessions),
                m.load.estimated_mbps, m.load.served_mbps, m.nic_gbps,
                m.cache_bytes ? human_bytes(static_cast<double>(m.cache_bytes)).c_str() : "-", m.catalog_generation,
                live.empty() ? "-" : live.c_str());
  }
  if (positional.empty() && !members.empty()) {  // every movie of the fleet's catalog
    std::vector<std::string> unreachable;
    try {
      for (const auto& e : read_fleet_catalog(fleet, common.session, &unreachable).entries)
        if (!(e.flags & proto::kEntryLive)) positional.push_back(e.name);
    } catch (const ClientError& e) {
      std::fprintf(stderr, "vod-client: cannot read the members' catalogs (%s): name the movies to place\n", e.what());
    }
    for (const auto& u : unreachable) std::fprintf(stderr, "vod-client: catalog left out: %s\n", u.c_str());
  }
  if (positional.empty()) return exit_ok;
  std::printf("\nplacement: weighted rendezvous order; new opens go to the first (of the first k, by client id)\n");
  for (const auto& name : positional) {
    Uri u = fleet;
    if (name.rfind("live/", 0) == 0) {
      u.live = true;
      u.movie = name.substr(5);
    } else {
      u.movie = name;
    }
    const auto order = fleet_order(u, *directory, common.session.client_id);
    unsigned spread = k;
    for (const auto& m : members)
      if (auto it = m.spread.find(name); !k && it != m.spread.end()) spread = std::max(spread, it->second);
    std::string list;
    for (const auto& m : order) list += (list.empty() ? "" : ",") + m.record.id();
    std::printf("%s k=%u first=%s order=%s\n", name.c_str(), std::max(spread, 1u), order.empty() ? "-" : order.front().record.id().c_str(),
                list.c_str());
  }
  return exit_ok;
}

}  // namespace vod::client::cli
