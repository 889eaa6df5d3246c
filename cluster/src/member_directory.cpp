// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/cluster/member_directory.hpp"

#include <map>

#include "vod/cluster/member_list_file.hpp"
#include "vod/log.hpp"

namespace vod::cluster {

namespace {

constexpr std::size_t kMaxMembers = 4096;
constexpr auto kWatchFor = std::chrono::seconds(30);  // then read the whole list again anyway

std::string age_text(std::time_t at) {
  const auto s = std::time(nullptr) - at;
  return s < 120 ? std::to_string(s) + " s" : std::to_string(s / 60) + " min";
}

}  // namespace

std::vector<MemberRecord> decode_members(const EtcdEndpoint& etcd, const std::vector<KeyValue>& kvs,
                                         const std::function<void(const std::string& key, const std::string& why)>& on_bad) {
  const std::string prefix = etcd.members_key();
  std::vector<MemberRecord> out;
  for (const auto& kv : kvs) {
    if (kv.key.compare(0, prefix.size(), prefix) != 0) continue;
    auto r = decode_member(std::string_view(kv.key).substr(prefix.size()), kv.value);
    if (!r) {
      on_bad(kv.key, r.error().message);
      continue;
    }
    out.push_back(std::move(r).value());
  }
  return out;
}

std::shared_ptr<MemberDirectory> MemberDirectory::shared(const EtcdEndpoint& etcd) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<MemberDirectory>> directories;
  std::lock_guard lock(mutex);
  // One directory per endpoint and credentials: two rdmasrc elements of one process may reach one
  // etcd as different users.
  const EtcdSecurity& c = etcd.security;
  auto& slot = directories[etcd.to_string() + '\n' + c.cacert + '\n' + c.cert + '\n' + c.key + '\n' + c.user + '\n' + c.password_file];
  if (auto d = slot.lock()) return d;
  auto d = std::make_shared<MemberDirectory>(etcd);
  slot = d;
  return d;
}

MemberDirectory::MemberDirectory(EtcdEndpoint etcd) : etcd_(std::move(etcd)), thread_([this] { run(); }) {}

MemberDirectory::~MemberDirectory() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();  // a watch in progress notices within a second (libcurl's progress callback)
}

void MemberDirectory::adopt(const std::vector<KeyValue>& kvs) {
  members_ = decode_members(etcd_, kvs, [this](const std::string& key, const std::string& why) {
    if (reported_.size() < 1024 && reported_.insert(key + '\n' + why).second)
      log::warn("cluster", "ignoring the member record " + key + " in " + etcd_.to_string() + ": " + why);
  });
}

bool MemberDirectory::adopt_saved() {
  auto saved = load_member_list(etcd_);
  if (!saved) return false;
  adopt(saved->records);
  from_disk_ = true;
  read_at_ = saved->saved;
  return true;
}

void MemberDirectory::wait_for(std::chrono::milliseconds d) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, d, [this] { return stopping_.load(); });
}

void MemberDirectory::run() {
  // Generous: a loaded machine answers late, and members() falls back meanwhile. Every call ends
  // at once when the directory stops.
  EtcdClient client(etcd_, std::chrono::milliseconds(4000), [this] { return stopping_.load(); });
  auto backoff = std::chrono::milliseconds(250);
  while (!stopping_) {
    try {
      auto range = client.range_prefix(etcd_.members_key(), kMaxMembers);
      if (range.more)
        log::warn("cluster", etcd_.to_string() + " lists more than " + std::to_string(kMaxMembers) + " members: using the first ones");
      save_member_list(etcd_, range.kvs);
      {
        std::lock_guard lock(mutex_);
        adopt(range.kvs);
        if (!last_error_.empty() && answered_)
          log::info("cluster", etcd_.to_string() + " answers again: " + std::to_string(members_.size()) + " members");
        answered_ = tried_ = true;
        from_disk_ = false;
        read_at_ = std::time(nullptr);
        last_error_.clear();
      }
      changed_.notify_all();
      backoff = std::chrono::milliseconds(250);
      client.watch_prefix(etcd_.members_key(), range.revision, kWatchFor);
    } catch (const EtcdInterrupted&) {
      break;
    } catch (const std::exception& e) {  // EtcdError, or an answer of an unexpected shape
      bool first_failure = false;
      {
        std::lock_guard lock(mutex_);
        first_failure = last_error_.empty();
        last_error_ = e.what();
        if (!answered_ && !from_disk_) adopt_saved();
        tried_ = true;
        if (first_failure)
          log::warn("cluster", std::string("etcd is unreachable (") + e.what() +
                                   "); using the last member list: " + std::to_string(members_.size()) + " members" +
                                   (read_at_ ? ", read " + age_text(read_at_) + " ago" + (from_disk_ ? " (saved on disk)" : "") : ""));
      }
      changed_.notify_all();
      wait_for(backoff);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    }
  }
}

std::vector<MemberRecord> MemberDirectory::members(std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, wait, [this] { return tried_; });
  if (!tried_ && !from_disk_) {  // etcd is slow: the saved list now, etcd's when it answers
    if (!adopt_saved())
      throw ClusterError("etcd at " + etcd_.to_string() + " did not answer within " + std::to_string(wait.count()) +
                         " ms, and no member list was saved before");
    log::warn("cluster", "etcd at " + etcd_.to_string() + " did not answer within " + std::to_string(wait.count()) +
                             " ms; using the member list saved on disk: " + std::to_string(members_.size()) + " members, read " +
                             age_text(read_at_) + " ago");
  }
  if (!answered_ && !from_disk_)
    throw ClusterError("etcd at " + etcd_.to_string() + " is unreachable (" + last_error_ + ") and no member list was saved before (" +
                       (member_list_path(etcd_).empty() ? std::string("no cache directory") : member_list_path(etcd_)) + ")");
  return members_;
}

std::string MemberDirectory::source() const {
  std::lock_guard lock(mutex_);
  if (last_error_.empty() && answered_) return etcd_.to_string() + " (watched)";
  return "the last list read (" + (read_at_ ? age_text(read_at_) + " ago" : std::string("never")) + (from_disk_ ? ", saved on disk" : "") +
         "): etcd is unreachable: " + last_error_;
}

}  // namespace vod::cluster
