// SPDX-License-Identifier: LGPL-2.1-or-later
// The server's Write-Record transport: one UDP socket that answers hellos with cookies and
// requests with records, paced. It keeps no state between requests beyond what it is sending now:
// per client address (IPv6: per /64) its sessions' newest epochs, their pacing and the ranges still
// to send. So VCR control stays with the client: a seek is a request with a newer epoch (which drops
// what the older epochs still had queued), a pause is no request.
//
// It can never be an amplifier: before a client has echoed a cookie (proving it receives at its
// address) it gets nothing larger than what it sent, and it costs the server a slot of a fixed
// table (address_budgets.hpp) and nothing else; errors are never larger than the request they
// answer and are rate-limited per address; and every byte sent is paced by the session's bucket (the
// rate it asked for: at least the floor, UdpOptions::min_rate_bps, at most --udp-client-rate), its address's
// (--udp-client-rate for all its ports and sessions) and the server's (--udp-max-rate).
//
// Limits are per address, not per port (ports are free): jobs, sessions and rate. Each job has a
// deadline (job_deadline): one not sent by then is dropped and the client asks again. The
// addresses that have data ready share the server's rate by deficit round robin (fair_queue.hpp);
// paced addresses sleep in a heap until their buckets allow, and idle addresses leave the table
// after idle_client: nothing is ever scanned per datagram or per receive.
//
// Datagrams carry at most the payload the client asked for (its path MTU) and are sent with the
// don't-fragment bit; consecutive datagrams of one record go out as one sendmsg with UDP GSO where
// the kernel has it, and the sendmsgs of several clients as one sendmmsg.
#pragma once

#include <sys/socket.h>

#include <netinet/in.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "udp/address_budgets.hpp"
#include "udp/cookie_jar.hpp"
#include "udp/fair_queue.hpp"
#include "udp/token_bucket.hpp"
#include "cache/segment_cache.hpp"
#include "udp/udp_admission.hpp"
#include "udp/zero_copy_sends.hpp"
#include "vod/defaults.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::udp {

// Why `max_payload` cannot be a datagram's payload (nullopt when it can): the one check that
// --udp-max-payload and UdpOptions share (defaults::kUdpPayloadMin..kUdpPayloadMax).
std::optional<std::string> max_payload_problem(std::uint32_t max_payload);

struct UdpOptions {
  std::string bind = "0.0.0.0";
  std::uint16_t port = defaults::kUdpPort;
  double max_rate_bps = 1e9;          // the whole server
  double client_rate_bps = 400e6;     // one client address (IPv6: /64) at most, all its ports and sessions together
  double min_rate_bps = 1e6;          // the floor: a request that asks for less is refused
  std::uint32_t max_payload = defaults::kUdpMaxPayload;  // bytes per datagram at most (clients ask for their path MTU's)
  std::size_t max_jobs_per_client = 128;     // ranges queued per client address
  std::size_t max_sessions_per_client = 32;  // sessions (and their epochs) per client address
  std::size_t max_clients = 4096;            // client addresses with state, after their cookie verified
  std::size_t max_jobs = 65536;              // ranges queued in all
  JobLife job_life;                          // deadlines (job_deadline)
  std::chrono::milliseconds idle_client{30000};  // an address with nothing queued is forgotten after this
  std::size_t pre_cookie_slots = 16384;          // the fixed table of hello and error budgets (16 bytes a slot)
  PreCookieTable::Limits pre_cookie;
  bool zero_copy = false;                    // --udp-zero-copy: MSG_ZEROCOPY sends (zero_copy_sends.hpp)
  std::size_t zero_copy_max_pinned = 256;    // sends pinned at once at most; beyond, a send is copied
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
  std::uint64_t expired = 0;         // jobs dropped at their deadline, not sent in full
  std::uint64_t clients_forgotten = 0;  // addresses whose state went (idle, or evicted for a new one)
};

class UdpService {
 public:
  using Clock = std::chrono::steady_clock;

  // Throws std::invalid_argument for options out of range, std::runtime_error when the socket
  // cannot be had.
  // `cache`: the segment cache that cached movies' ranges are sent from (null: none).
  explicit UdpService(const UdpOptions& options, cache::SegmentCache* cache = nullptr);
  ~UdpService();
  UdpService(const UdpService&) = delete;
  UdpService& operator=(const UdpService&) = delete;

  // What requests are answered from (a new generation after a rescan). Jobs already queued keep
  // the generation they were admitted from.
  void publish(std::shared_ptr<const UdpRegions> regions) { regions_ = std::move(regions); }

  int socket_fd() const noexcept { return fd_.get(); }
  int timer_fd() const noexcept { return timer_.get(); }
  std::uint16_t port() const noexcept { return port_; }
  void on_readable();
  void on_timer();
  const UdpStats& stats() const noexcept { return stats_; }
  // The MSG_ZEROCOPY sends' figures, or null when they are off (or the kernel refused them).
  const ZeroCopyStats* zero_copy_stats() const noexcept { return zero_copy_ ? &zero_copy_->stats() : nullptr; }
  std::size_t clients() const noexcept { return clients_.size(); }  // addresses with state
  std::size_t sessions() const noexcept { return sessions_; }       // sessions with state, all addresses
  std::size_t jobs() const noexcept { return jobs_; }               // ranges queued, all addresses

 private:
  // Where a datagram goes: the address and port the request came from, and the local address it
  // came to (IP_PKTINFO / IPV6_PKTINFO), which every answer leaves from: a server bound to a
  // wildcard on a host with several addresses answers from the one its client asked, which is the
  // only one a client's connected socket accepts.
  struct Endpoint {
    sockaddr_storage addr{};
    socklen_t len = 0;
    int local_family = 0;  // AF_INET or AF_INET6 when the local address is known
    in6_addr local{};      // IPv4 in its first 4 bytes
    unsigned local_ifindex = 0;  // IPv6 link-local answers need it
  };
  struct Job {
    std::uint32_t epoch = 0;
    std::uint64_t record_seq = 0, buffer_offset = 0;
    UdpJob data;
    Endpoint to;
    Clock::time_point deadline;
    std::uint64_t sent = 0;
    std::uint64_t ordinal = 0;  // records first asked for before it (the test hook counts by it)
    bool repair = false;        // asks again for a record asked for before (the test hook spares it)
    std::size_t request_size = 0;  // of the request it answers: an error sent for it is no larger
    // A cached movie's range: the segment at `sent` is being faulted in (answered: done).
    struct Fault {
      bool done = false;
      proto::SegmentStatus status = proto::SegmentStatus::ok;
    };
    std::shared_ptr<Fault> fault;
  };
  struct Session {             // a client's session id, from one port of the address
    std::uint32_t id = 0;
    std::uint16_t port = 0;
    std::uint32_t epoch = 0;   // the newest seen
    TokenBucket pace;          // the rate it asked for (at least the floor, at most the client rate)
    std::vector<Job> jobs;     // in the order asked; the front is being sent
    Clock::time_point last{};  // its last request
  };
  struct Client {  // one address (IPv6: one /64), once a cookie of it verified
    AddressKey key;
    TokenBucket bucket;              // --udp-client-rate, for all its sessions
    std::vector<Session> sessions;   // at most max_sessions_per_client
    std::size_t jobs = 0;            // over all its sessions
    std::size_t next_session = 0;    // round robin among its sessions
    Clock::time_point earliest_deadline = Clock::time_point::max();  // of its jobs (may be earlier: then it is recomputed)
    bool queued = false;             // in ready_
    Clock::time_point wake = Clock::time_point::max();  // asleep in sleepers_ until then (max: not asleep)
    bool idle = false;               // in idle_ (no jobs, not queued)
    std::list<AddressKey>::iterator idle_at;
    Clock::time_point idle_since{};
  };
  struct Wake {
    Clock::time_point at;
    AddressKey key;
    bool operator>(const Wake& o) const noexcept { return at > o.at; }
  };
  struct Scratch;  // the send and receive buffers, allocated once
  void reap_zero_copy();  // MSG_ZEROCOPY notifications on the error queue

  bool test_dropped(const Job& j, bool last) noexcept;
  void handle(const std::uint8_t* data, std::size_t n, const Endpoint& from, Clock::time_point now);
  void on_hello(proto::Bytes b, const Endpoint& from, const AddressKey& key, Clock::time_point now);
  void on_request(proto::Bytes b, const Endpoint& from, const AddressKey& key, Clock::time_point now);
  void send_error(const Endpoint& to, const AddressKey& key, std::size_t request_size, proto::WriteRecordError e, Clock::time_point now);
  void send_small(const Endpoint& to, const std::vector<std::uint8_t>& bytes);
  // The address's state, made if there is room (an idle address may be forgotten for it); null
  // when the table is full of addresses with jobs.
  Client* client_for(const AddressKey& key, Clock::time_point now);
  // The session's state, made (at `epoch`) if there is room; null when the address has as many as
  // it may, all with jobs.
  Session* session_for(Client& c, std::uint32_t id, std::uint16_t port, std::uint32_t epoch, Clock::time_point now);
  void enqueue(Client& c);                      // has data: into the ring (leaves idle_)
  void set_idle(Client& c, Clock::time_point now);  // no jobs: forgotten after idle_client
  void forget(Client& c);
  void expire_jobs(Client& c, Clock::time_point now);
  // The first of the address's sessions (round robin) whose pacing allows its front job's next
  // datagram now; null if none.
  Session* sendable(Client& c, Clock::time_point now);
  // What of the job's range can be sent now: the rest of it, or for a cached movie the rest of the
  // segment at `sent` when that is resident (else empty: it is faulted in, and the address woken
  // when it is). `failed` when the disk could not give it.
  struct Ready {
    std::span<const std::uint8_t> bytes;
    bool failed = false;
  };
  Ready ready_bytes(const Client& c, Job& j, Clock::time_point now);
  Clock::time_point wake_time(Client& c, Clock::time_point now);
  void wake_sleepers(Clock::time_point now);
  void sweep_idle(Clock::time_point now);
  void pump(Clock::time_point now);
  void arm_timer(Clock::time_point now);
  std::uint64_t now_seconds(Clock::time_point now) const;
  double wire_bytes(std::uint32_t payload) const noexcept;

  UdpOptions options_;
  cache::SegmentCache* cache_;
  std::shared_ptr<UdpService*> self_;  // the cache's answers hold it weakly: null once this is gone
  UniqueFd fd_;
  UniqueFd timer_;
  Clock::time_point armed_ = Clock::time_point::max();  // what timer_ is set to (max: disarmed)
  std::uint16_t port_ = 0;
  bool gso_ = false;
  CookieJar cookies_;
  std::shared_ptr<const UdpRegions> regions_;
  PreCookieTable pre_cookie_;
  std::unordered_map<AddressKey, Client, AddressHasher> clients_;  // only addresses whose cookie verified
  FairQueue<Client*> ready_;        // addresses with a datagram their pacing allows: deficit round robin
  std::priority_queue<Wake, std::vector<Wake>, std::greater<Wake>> sleepers_;  // paced addresses (entries may be stale)
  std::list<AddressKey> idle_;      // addresses with nothing queued, oldest first
  TokenBucket total_;
  TokenBucket hellos_total_;
  Clock::time_point started_ = Clock::now();
  std::size_t jobs_ = 0, sessions_ = 0;
  bool table_full_ = false;         // logged once each time the address table fills
  bool socket_full_ = false;        // the last pump stopped at a full socket
  double server_wait_ = 0;          // the last pump stopped for total_: bytes the next send needs
  std::uint64_t jobs_admitted_ = 0, datagrams_built_ = 0;
  std::set<std::pair<std::uint32_t, std::uint64_t>> test_seen_;  // the test hook's records (session, seq)
  std::unique_ptr<Scratch> scratch_;
  std::unique_ptr<ZeroCopySends> zero_copy_;  // --udp-zero-copy, when the kernel took SO_ZEROCOPY
  bool zero_copy_told_ = false;               // logged that the kernel copies on this path
  UdpStats stats_;
};

}  // namespace vod::server::udp
