// SPDX-License-Identifier: LGPL-2.1-or-later
#include "fleet/member_registration.hpp"

#include "vod/cluster/etcd_client.hpp"
#include "vod/log.hpp"

namespace vod::server::fleet {

namespace {
constexpr auto kMinPutInterval = std::chrono::seconds(1);  // load changes coalesce into one put a second
// The last call, on the way out: a server with nothing to drain exits within 2 s of SIGTERM, and a
// lease that etcd did not revoke in time expires by itself within its TTL.
constexpr auto kRevokeTimeout = std::chrono::milliseconds(1000);
}  // namespace

MemberRegistration::MemberRegistration(cluster::EtcdEndpoint etcd, std::chrono::seconds ttl, cluster::MemberRecord record)
    : etcd_(std::move(etcd)), ttl_(ttl), key_(etcd_.members_key() + record.id()), record_(std::move(record)), thread_([this] { run(); }) {}

MemberRegistration::~MemberRegistration() {
  withdraw();
  thread_.join();
}

void MemberRegistration::update(const cluster::MemberRecord& record) {
  {
    std::lock_guard lock(mutex_);
    if (record == record_) return;
    record_ = record;
    changed_ = true;
  }
  wake_.notify_one();
}

void MemberRegistration::withdraw() {
  {
    std::lock_guard lock(mutex_);
    withdraw_ = true;
    stopping_ = true;  // ends a call in progress within 0.1 s, whatever etcd does
  }
  wake_.notify_one();
}

void MemberRegistration::run() {
  using Clock = std::chrono::steady_clock;
  // A third of the TTL, in milliseconds: in whole seconds a 2 s TTL made it 0, which kept the
  // lease alive in a busy loop and gave libcurl a timeout of 0 (none at all).
  const auto third = std::chrono::duration_cast<std::chrono::milliseconds>(ttl_) / 3;
  // Short calls: a keepalive that waits longer than a third of the TTL has failed anyway. Any call
  // ends at once on withdraw(), so that a hung etcd never holds up the server's exit.
  cluster::EtcdClient etcd(etcd_, std::min<std::chrono::milliseconds>(third, std::chrono::milliseconds(2000)),
                           [this] { return stopping_.load(); });
  std::int64_t lease = 0;
  bool failing = false;
  auto next_keepalive = Clock::now();
  auto last_put = Clock::time_point{};
  auto retry_wait = std::chrono::milliseconds(500);
  std::unique_lock lock(mutex_);
  while (!withdraw_) {
    try {
      const bool due = Clock::now() >= next_keepalive;
      if (!lease) {
        const auto record = encode_member(record_);
        changed_ = false;
        lock.unlock();
        lease = etcd.grant(ttl_);
        etcd.put(key_, record, lease);
        lock.lock();
        last_put = Clock::now();
        next_keepalive = last_put + third;
        log::info("cluster", (failing ? "registered again in " : "registered in ") + etcd_.to_string() + " as " + key_ + " (lease " +
                                 std::to_string(ttl_.count()) + " s)");
        failing = false;
      } else if (due) {
        lock.unlock();
        const bool alive = etcd.keepalive(lease);
        lock.lock();
        if (!alive) {
          log::warn("cluster", "etcd no longer has this server's lease (it expired while etcd was unreachable): registering again");
          lease = 0;
          continue;
        }
        if (failing) log::info("cluster", etcd_.to_string() + " answers again; the lease is alive");
        failing = false;
        next_keepalive = Clock::now() + third;
      } else if (changed_ && Clock::now() - last_put >= kMinPutInterval) {
        const auto record = encode_member(record_);
        changed_ = false;
        lock.unlock();
        etcd.put(key_, record, lease);
        lock.lock();
        last_put = Clock::now();
      }
      retry_wait = std::chrono::milliseconds(500);
      auto until = next_keepalive;
      if (changed_) until = std::min(until, last_put + kMinPutInterval);
      wake_.wait_until(lock, until, [&] { return withdraw_ || (changed_ && Clock::now() - last_put >= kMinPutInterval); });
    } catch (const cluster::EtcdInterrupted&) {
      if (!lock.owns_lock()) lock.lock();
      break;
    } catch (const std::exception& e) {
      if (!lock.owns_lock()) lock.lock();
      if (!failing)
        log::warn("cluster", std::string("cannot keep this server's record in etcd: ") + e.what() +
                                 "; serving on, retrying (clients use their last member list)");
      failing = true;
      changed_ = true;  // the record may not have been written
      wake_.wait_for(lock, retry_wait, [&] { return withdraw_; });
      retry_wait = std::min(retry_wait * 2, std::chrono::milliseconds(4000));
    }
  }
  lock.unlock();
  if (!lease) return;
  try {
    etcd.revoke(lease, kRevokeTimeout);  // the record goes with it, at once
    log::info("cluster", "withdrawn from " + etcd_.to_string());
  } catch (const std::exception& e) {
    log::warn("cluster", std::string("could not withdraw from etcd (the record expires with its lease): ") + e.what());
  }
}

}  // namespace vod::server::fleet
