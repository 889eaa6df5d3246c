// SPDX-License-Identifier: LGPL-2.1-or-later
// The last member list read from etcd, kept on disk, so that a client started while etcd is down
// still finds the fleet (with a warning). One file per etcd endpoint and prefix, in
// $VOD_CLUSTER_CACHE_DIR, else $XDG_CACHE_HOME/rdma-vod, else ~/.cache/rdma-vod. The raw records
// are kept, and decoded again when read: the file gets no more trust than etcd.
#pragma once

#include <chrono>
#include <ctime>
#include <optional>
#include <string>
#include <vector>

#include "vod/cluster/etcd_client.hpp"

namespace vod::cluster {

struct SavedMembers {
  std::time_t saved = 0;
  std::vector<KeyValue> records;
};

// Empty when no directory is known (no HOME, say): nothing is saved.
std::string member_list_path(const EtcdEndpoint& etcd);
// Atomic (a new file from mkstemp, renamed over the old one); a failure is logged, never thrown.
void save_member_list(const EtcdEndpoint& etcd, const std::vector<KeyValue>& records);

// A saved list older than this is ignored with a warning: the members it names may be anything by
// now. $VOD_CLUSTER_LIST_MAX_AGE (seconds) overrides the default of a day.
inline constexpr std::chrono::seconds kMemberListMaxAge{24 * 3600};
std::chrono::seconds member_list_max_age();
std::optional<SavedMembers> load_member_list(const EtcdEndpoint& etcd, std::chrono::seconds max_age = member_list_max_age());

}  // namespace vod::cluster
