// SPDX-License-Identifier: LGPL-2.1-or-later
// This server's membership of a fleet (--cluster): its record in etcd under PREFIX/members/ID,
// attached to a lease that a thread of its own keeps alive, so that a server that dies drops out
// within the lease's TTL. The event loop never waits on etcd: it hands the thread a new record when
// the load or the catalog changes (update), and the thread writes it at most once a second. Losing
// etcd stops nothing but the record's updates: the thread retries, and registers again (a new
// lease) when etcd forgot the old one. withdraw() revokes the lease at once (a stopping server).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include "vod/cluster/etcd_url.hpp"
#include "vod/cluster/member_record.hpp"

namespace vod::server::fleet {

class MemberRegistration {
 public:
  MemberRegistration(cluster::EtcdEndpoint etcd, std::chrono::seconds ttl, cluster::MemberRecord record);
  ~MemberRegistration();  // withdraws, then waits for the thread: about a second at most, whatever etcd does
  MemberRegistration(const MemberRegistration&) = delete;
  MemberRegistration& operator=(const MemberRegistration&) = delete;

  void update(const cluster::MemberRecord& record);  // thread-safe, never blocks on etcd
  void withdraw();                                   // revoke the lease now; the thread then ends

 private:
  void run();

  const cluster::EtcdEndpoint etcd_;
  const std::chrono::seconds ttl_;
  const std::string key_;
  std::mutex mutex_;
  std::condition_variable wake_;
  cluster::MemberRecord record_;
  bool changed_ = true;
  bool withdraw_ = false;
  std::atomic<bool> stopping_{false};  // withdraw_, read by the etcd client's calls without the mutex
  std::thread thread_;                 // last
};

}  // namespace vod::server::fleet
