// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's Write-Record transport: one UDP socket that answers hellos with cookies and
// requests with records, paced. It keeps no state between requests beyond the pacing of what it is
// sending now: per client address a token bucket and a queue of ranges still to send, dropped when
// empty. So VCR control stays with the client: a seek is a request with a newer epoch (which drops
// what the older epochs still had queued), a pause is no request.
//
// It can never be an amplifier: before a client has echoed a cookie (proving it receives at its
// address) it gets nothing larger than what it sent; errors are never larger than the request they
// answer and are rate-limited per address; and every byte sent is paced by the client's bucket
// (the rate it asked for, capped by --udp-client-rate) and the server's (--udp-max-rate).
//
// Datagrams carry at most the payload the client asked for (its path MTU) and are sent with the
// don't-fragment bit; consecutive datagrams of one record go out as one sendmsg with UDP GSO where
// the kernel has it, and the sendmsgs of several clients as one sendmmsg.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <memory>
#include <string>
#include <vector>

#include "udp/cookie_jar.hpp"
#include "udp/token_bucket.hpp"
#include "udp/udp_admission.hpp"

namespace vod::server::udp {

struct UdpOptions {
  std::string bind = "0.0.0.0";
  std::uint16_t port = proto::kWriteRecordPort;
  double max_rate_bps = 1e9;          // the whole server
  double client_rate_bps = 400e6;     // one client address at most
  std::uint32_t max_payload = 8192;   // bytes per datagram at most (clients ask for their path MTU's)
  std::size_t max_jobs_per_client = 256;
  std::size_t max_jobs = 65536;
  // A test hook (--udp-test-drop): datagrams the sender "loses" on purpose, so tests can create
  // exact holes: the last datagram of every Nth record, every datagram of every Nth record, every
  // Nth datagram; repairs of a record are never dropped. 0: none. Sends one datagram per sendmsg
  // while any is set.
  struct TestDrop {
    unsigned last_of_record = 0, whole_record = 0, datagram = 0;
    bool any() const noexcept { return last_of_record || whole_record || datagram; }
  } test_drop;
};

// Parses --udp-test-drop: "last:N,record:N,datagram:N" (any of them); throws std::invalid_argument.
UdpOptions::TestDrop parse_test_drop(const std::string& text);

struct UdpStats {
  std::uint64_t hellos = 0, requests = 0, datagrams = 0, bytes = 0, sends = 0, errors_sent = 0;
  std::uint64_t dropped = 0;        // malformed, unexpected, or over a rate limit for errors
  std::uint64_t bad_cookies = 0, rate_limited = 0, superseded = 0, test_dropped = 0;
};

class UdpService {
 public:
  using Clock = std::chrono::steady_clock;

  explicit UdpService(const UdpOptions& options);
  ~UdpService();
  UdpService(const UdpService&) = delete;
  UdpService& operator=(const UdpService&) = delete;

  // What requests are answered from (a new generation after a rescan).
  void publish(std::shared_ptr<const UdpRegions> regions) { regions_ = std::move(regions); }

  int socket_fd() const noexcept { return fd_; }
  int timer_fd() const noexcept { return timer_; }
  std::uint16_t port() const noexcept { return port_; }
  void on_readable();
  void on_timer();
  const UdpStats& stats() const noexcept { return stats_; }
  std::size_t clients() const noexcept { return clients_.size(); }

 private:
  struct Job {
    proto::WriteRecordRequest request;
    UdpJob data;
    std::uint64_t sent = 0;
    std::uint64_t ordinal = 0;  // records first asked for before it (the test hook counts by it)
    bool repair = false;        // asks again for a record asked for before (the test hook spares it)
  };
  bool test_dropped(const Job& j, bool last) noexcept;
  struct Client {
    sockaddr_storage addr{};
    socklen_t addr_len = 0;
    TokenBucket bucket;
    TokenBucket error_budget;  // error datagrams to this address
    TokenBucket hello_budget;  // cookies to this address
    std::deque<Job> jobs;
    std::map<std::uint32_t, std::uint32_t> epochs;  // session -> newest epoch seen
  };

  void handle(const std::uint8_t* data, std::size_t n, const sockaddr_storage& from, socklen_t from_len, Clock::time_point now);
  void on_hello(proto::Bytes b, Client& c, Clock::time_point now);
  void on_request(proto::Bytes b, Client& c, Clock::time_point now);
  void send_error(Client& c, std::size_t request_size, proto::WriteRecordError e, Clock::time_point now);
  void send_small(Client& c, const std::vector<std::uint8_t>& bytes);
  Client& client_for(const sockaddr_storage& addr, socklen_t len, Clock::time_point now);
  void pump(Clock::time_point now);
  void finish_sent_jobs();
  void arm_timer(Clock::time_point now);
  std::uint64_t now_seconds(Clock::time_point now) const;

  UdpOptions options_;
  int fd_ = -1;
  int timer_ = -1;
  Clock::time_point armed_ = Clock::time_point::max();  // what timer_ is set to (max: disarmed)
  std::uint16_t port_ = 0;
  bool gso_ = false;
  CookieJar cookies_;
  std::shared_ptr<const UdpRegions> regions_;
  std::map<std::string, Client> clients_;  // by address bytes; only while they have jobs or recent budgets
  TokenBucket total_;
  TokenBucket hellos_total_;
  Clock::time_point started_ = Clock::now();
  std::size_t jobs_ = 0;
  std::uint64_t jobs_admitted_ = 0, datagrams_built_ = 0;
  std::set<std::pair<std::uint32_t, std::uint64_t>> test_seen_;  // the test hook's records (session, seq)
  UdpStats stats_;
};

}  // namespace vod::server::udp
