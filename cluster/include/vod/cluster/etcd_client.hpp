// SPDX-License-Identifier: LGPL-2.1-or-later
// A blocking client of etcd's v3 JSON gateway (POST /v3/...; keys and values base64), for the few
// calls a fleet needs: leases, put, prefix range, delete, and a watch that returns at the first
// change. One EtcdClient per thread: it keeps one libcurl handle (and its keep-alive connection).
// Every failure throws EtcdError naming the call, the endpoint and what libcurl or etcd said.
//
// Over etcds:// it speaks TLS, checking etcd's certificate (against --etcd-cacert, else the
// system's CAs; a certificate that does not verify is refused with libcurl's reason) and showing
// a client certificate when one is set. With --etcd-user it authenticates (POST
// /v3/auth/authenticate, the password read from its file each time) and sends the token with every
// call; the token is renewed every minute, before etcd's default TTL of five minutes ends, and at
// once when etcd says it is no longer valid.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "vod/cluster/etcd_url.hpp"

namespace vod::cluster {

class EtcdError : public ClusterError {
 public:
  using ClusterError::ClusterError;
};

struct KeyValue {
  std::string key, value;
};

struct RangeResult {
  std::int64_t revision = 0;
  std::vector<KeyValue> kvs;
  bool more = false;  // etcd had more than the limit asked for
};

// A call that `stop` ended (its owner is stopping): nothing to report, and nothing to retry.
class EtcdInterrupted : public EtcdError {
 public:
  using EtcdError::EtcdError;
};

class EtcdClient {
 public:
  // `timeout` bounds every call (connecting included). `stop`, when given, is asked at least every
  // 100 ms during every call: true ends the call at once (EtcdInterrupted; a watch returns false),
  // so that the thread that owns the client can end within a fraction of a second.
  EtcdClient(EtcdEndpoint endpoint, std::chrono::milliseconds timeout, std::function<bool()> stop = {});
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  const EtcdEndpoint& endpoint() const noexcept { return endpoint_; }
  std::int64_t grant(std::chrono::seconds ttl);
  // False when etcd no longer has the lease (it expired while etcd was unreachable, say).
  bool keepalive(std::int64_t lease);
  void revoke(std::int64_t lease, std::chrono::milliseconds timeout);  // its own bound: called on the way out, past `stop`
  void put(const std::string& key, const std::string& value, std::int64_t lease = 0);
  void erase(const std::string& key);
  RangeResult range_prefix(const std::string& prefix, std::size_t limit);
  // Blocks until a key under `prefix` changes after `revision`, `wait` passes, or the client's
  // `stop` returns true. True when something changed.
  bool watch_prefix(const std::string& prefix, std::int64_t revision, std::chrono::milliseconds wait);

 private:
  struct Curl;
  // `interruptible`: false only for a call made after `stop` (revoke on the way out).
  std::string post(const char* call, const std::string& path, const std::string& body, std::chrono::milliseconds timeout,
                   const std::function<bool(std::string&)>& on_data = {}, bool interruptible = true);
  std::string post_once(const char* call, const std::string& path, const std::string& body, std::chrono::milliseconds timeout,
                        const std::function<bool(std::string&)>& on_data, bool interruptible, bool with_token);
  void authenticate(std::chrono::milliseconds timeout);
  EtcdEndpoint endpoint_;
  std::string token_;  // etcd's auth token, with --etcd-user
  std::chrono::steady_clock::time_point token_at_{};
  std::chrono::milliseconds timeout_;
  std::function<bool()> stop_;
  std::unique_ptr<Curl> curl_;
};

std::string base64_encode(std::string_view bytes);
std::string base64_decode(std::string_view text);  // throws EtcdError when it is not base64
// The key that ends a prefix range: the prefix with its last byte raised (etcd's range_end).
std::string prefix_end(std::string prefix);

}  // namespace vod::cluster
