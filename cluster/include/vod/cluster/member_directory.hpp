// SPDX-License-Identifier: LGPL-2.1-or-later
// A client's view of a fleet: the member records under PREFIX/members/, read from etcd and then
// watched, on a thread of its own, so that nothing a session does waits on etcd once the list is
// known. With etcd unreachable it keeps the last list it read (or, in a new process, the list saved
// on disk: member_list_file.hpp), with a warning.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <ctime>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "vod/cluster/etcd_client.hpp"
#include "vod/cluster/member_record.hpp"

namespace vod::cluster {

// The records under etcd.members_key() that decode; each one that does not goes to on_bad with
// its key and the reason.
std::vector<MemberRecord> decode_members(const EtcdEndpoint& etcd, const std::vector<KeyValue>& kvs,
                                         const std::function<void(const std::string& key, const std::string& why)>& on_bad);

class MemberDirectory {
 public:
  // One per etcd endpoint (and prefix) in a process, shared by the sessions that name it, alive
  // while one of them holds it.
  static std::shared_ptr<MemberDirectory> shared(const EtcdEndpoint& etcd);

  explicit MemberDirectory(EtcdEndpoint etcd);
  ~MemberDirectory();
  MemberDirectory(const MemberDirectory&) = delete;
  MemberDirectory& operator=(const MemberDirectory&) = delete;

  const EtcdEndpoint& etcd() const noexcept { return etcd_; }
  // The members now. Until etcd has answered once, waits for it up to `wait`; then, with etcd
  // unreachable or slow, the list saved on disk (with a warning). Throws ClusterError when there is
  // neither.
  std::vector<MemberRecord> members(std::chrono::milliseconds wait = std::chrono::milliseconds(5000));
  // Where the list came from, for `vod-client cluster` and log lines.
  std::string source() const;

 private:
  void run();
  void adopt(const std::vector<KeyValue>& kvs);  // under mutex_
  bool adopt_saved();                            // under mutex_: the list saved on disk, if any
  void wait_for(std::chrono::milliseconds d);

  EtcdEndpoint etcd_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<MemberRecord> members_;
  bool answered_ = false;   // etcd answered at least once
  bool tried_ = false;      // the first attempt ended, answered or not
  bool from_disk_ = false;  // members_ came from the saved list
  std::time_t read_at_ = 0;
  std::string last_error_;          // empty while etcd answers
  std::set<std::string> reported_;  // bad records already logged (key and value)
  std::atomic<bool> stopping_{false};
  std::thread thread_;  // last: started when everything above exists
};

}  // namespace vod::cluster
