// SPDX-License-Identifier: LGPL-2.1-or-later
// The Write-Record service's state per client address (IPv6: per /64), kept only for addresses
// whose cookie verified: their sessions, the ranges (jobs) each still has to send, and where each
// address waits. An address is in exactly one place (Client::where): in the ring of addresses with
// a datagram they may send now (deficit round robin, fair_queue.hpp), asleep in a heap until their
// pacing allows, or idle, forgotten after idle_client. Every table is bounded (addresses, sessions
// per address, jobs per address and in all) and every job has a deadline, so nothing a client does
// grows it; nothing is ever scanned per datagram or per receive.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <queue>
#include <unordered_map>
#include <vector>

#include "udp/address_budgets.hpp"
#include "udp/fair_queue.hpp"
#include "udp/test_drop.hpp"
#include "udp/token_bucket.hpp"
#include "udp/udp_admission.hpp"
#include "udp/udp_options.hpp"
#include "udp/udp_socket.hpp"

namespace vod::server::udp {

using Clock = std::chrono::steady_clock;

// A bucket's burst: 10 ms at its rate, at least 64 kB, and never less than two of the largest
// datagrams (a burst smaller than one datagram would never let it go).
double burst_for(double bytes_per_second, std::uint32_t max_payload);

struct Job {  // one requested range
  std::uint32_t epoch = 0;
  std::uint64_t record_seq = 0, buffer_offset = 0;
  UdpJob data;
  Endpoint to;
  Clock::time_point deadline;
  std::uint64_t sent = 0;
  TestDropper::Mark mark;        // the test hook's: its ordinal, or a repair
  std::size_t request_size = 0;  // of the request it answers: an error sent for it is no larger
  // A cached movie's range: the segment at `sent` is being faulted in (answered: done).
  struct Fault {
    bool done = false;
    proto::SegmentStatus status = proto::SegmentStatus::ok;
  };
  std::shared_ptr<Fault> fault;
};

struct Session {  // a client's session id, from one port of the address
  std::uint32_t id = 0;
  std::uint16_t port = 0;
  std::uint32_t epoch = 0;   // the newest seen
  TokenBucket pace;          // the rate it asked for (at least the floor, at most the client rate)
  std::vector<Job> jobs;     // in the order asked; the front is being sent
  Clock::time_point last{};  // its last request
};

struct Client {  // one address (IPv6: one /64), once a cookie of it verified
  enum class Where { idle, ready, asleep };
  AddressKey key;
  TokenBucket bucket;                                              // --udp-client-rate, for all its sessions
  std::vector<Session> sessions;                                   // at most max_sessions_per_client
  std::size_t jobs = 0;                                            // over all its sessions
  std::size_t next_session = 0;                                    // round robin among its sessions
  Clock::time_point earliest_deadline = Clock::time_point::max();  // of its jobs (may be earlier: then it is recomputed)
  Where where = Where::idle;                                       // set_idle files a new address
  Clock::time_point wake = Clock::time_point::max();               // asleep: until then (its heap entry is stale otherwise)
  std::list<AddressKey>::iterator idle_at;                         // idle: its place in the idle list
  Clock::time_point idle_since{};
};

class ClientTable {
 public:
  struct Limits {
    std::size_t max_clients = 4096, max_sessions_per_client = 32, max_jobs_per_client = 128, max_jobs = 65536;
    std::chrono::milliseconds idle_client{30000};
    double client_rate_bps = defaults::kUdpClientRateBps;
    std::uint32_t max_payload = 0;
  };
  // `quantum`: the bytes an address may send per turn of the ring. `stats`: where the table counts
  // what it drops and forgets (superseded, expired, clients_forgotten).
  ClientTable(const Limits& limits, double quantum, UdpStats& stats);

  // The address's state, made if there is room (the address idle longest may be forgotten for
  // it); null when the table is full of addresses with jobs.
  Client* client_for(const AddressKey& key, Clock::time_point now);
  Client* find(const AddressKey& key);
  // The session's state, made (at `epoch`) if there is room (the session with nothing queued that
  // asked longest ago is forgotten for it); null when the address has as many as it may, all busy.
  Session* session_for(Client& c, std::uint32_t id, std::uint16_t port, std::uint32_t epoch, Clock::time_point now);
  // A newer epoch (a seek): the session's jobs not started yet are dropped. A job half sent stays:
  // its datagrams carry the old epoch and the client drops them; cutting it would only save what
  // is already in flight.
  void supersede(Client& c, Session& s, std::uint32_t epoch, Clock::time_point now);
  bool room_for_job(const Client& c) const noexcept { return c.jobs < limits_.max_jobs_per_client && jobs_ < limits_.max_jobs; }
  // And the address joins the ring. `urgent`: sent next, before the rest of the range being sent.
  void add_job(Client& c, Session& s, Job j, bool urgent = false);
  void finish_front_job(Client& c, Session& s);  // sent, failed or expired: it goes
  // Drops the address's jobs past their deadline (as its turn begins: no job it drops has bytes in
  // a batch still being built).
  void expire_jobs(Client& c, Clock::time_point now);

  // The ring. front() is whose turn it is; the others move the front out of it.
  bool ring_empty() const noexcept { return ready_.empty(); }
  Client& front() const noexcept { return *ready_.front(); }
  FairQueue<Client*>& turns() noexcept { return ready_; }
  void front_goes_idle(Clock::time_point now);  // it has no jobs
  void front_sleeps(Clock::time_point until);   // its pacing holds it until then
  void wake(Client& c) { enqueue(c); }          // it may send (its segment came in)

  // Due sleepers into the ring, and idle addresses past idle_client forgotten.
  void wake_sleepers(Clock::time_point now);
  void sweep_idle(Clock::time_point now);
  // When the table next needs the clock: the first sleeper's wake, and the first idle address's
  // forgetting (max: never).
  Clock::time_point next_wake() const noexcept;
  Clock::time_point next_forget() const;

  std::size_t clients() const noexcept { return clients_.size(); }
  std::size_t sessions() const noexcept { return sessions_; }
  std::size_t jobs() const noexcept { return jobs_; }

 private:
  struct WakeAt {
    Clock::time_point at;
    AddressKey key;
    bool operator>(const WakeAt& o) const noexcept { return at > o.at; }
  };
  void enqueue(Client& c);                          // has data: into the ring (leaves idle_)
  void set_idle(Client& c, Clock::time_point now);  // new, or no jobs left (not idle yet): forgotten after idle_client
  void forget(Client& c);                           // an idle address only
  void drop_jobs(Client& c, std::size_t n) noexcept;

  Limits limits_;
  std::unordered_map<AddressKey, Client, AddressHasher> clients_;
  FairQueue<Client*> ready_;  // addresses with a datagram their pacing allows: deficit round robin
  std::priority_queue<WakeAt, std::vector<WakeAt>, std::greater<WakeAt>> sleepers_;  // paced addresses (entries may be stale)
  std::list<AddressKey> idle_;                                                       // addresses with nothing queued, oldest first
  std::size_t jobs_ = 0, sessions_ = 0;
  bool table_full_ = false;  // logged once each time the address table fills
  UdpStats& stats_;
};

}  // namespace vod::server::udp
