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
//
// The pieces: udp_socket (the socket and its batched I/O), client_table (addresses, sessions, jobs
// and where each address waits), paced_sender with send_turn (the fair-share sender and its pure
// decision) and trains (datagrams of a record); this file receives, admits and enqueues.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "cache/segment_cache.hpp"
#include "udp/address_budgets.hpp"
#include "udp/client_table.hpp"
#include "udp/cookie_jar.hpp"
#include "udp/paced_sender.hpp"
#include "udp/test_drop.hpp"
#include "udp/token_bucket.hpp"
#include "udp/udp_admission.hpp"
#include "udp/udp_options.hpp"
#include "udp/udp_socket.hpp"

namespace vod::server::udp {

class UdpService {
 public:
  // Throws std::invalid_argument for options out of range, std::runtime_error when the socket
  // cannot be had.
  // `cache`: the segment cache that cached movies' ranges are sent from (null: none).
  explicit UdpService(const UdpOptions& options, cache::SegmentCache* cache = nullptr);
  UdpService(const UdpService&) = delete;
  UdpService& operator=(const UdpService&) = delete;

  // What requests are answered from (a new generation after a rescan). Jobs already queued keep
  // the generation they were admitted from.
  void publish(std::shared_ptr<const UdpRegions> regions) { regions_ = std::move(regions); }

  int socket_fd() const noexcept { return socket_.fd(); }
  int timer_fd() const noexcept { return sender_.timer_fd(); }
  std::uint16_t port() const noexcept { return socket_.port(); }
  void on_readable();
  void on_timer() { sender_.on_timer(); }
  const UdpStats& stats() const noexcept { return stats_; }
  // The MSG_ZEROCOPY sends' figures, or null when they are off (or the kernel refused them).
  const ZeroCopyStats* zero_copy_stats() const noexcept { return sender_.zero_copy_stats(); }
  std::size_t clients() const noexcept { return table_.clients(); }    // addresses with state
  std::size_t sessions() const noexcept { return table_.sessions(); }  // sessions with state, all addresses
  std::size_t jobs() const noexcept { return table_.jobs(); }          // ranges queued, all addresses

 private:
  void handle(std::span<const std::uint8_t> datagram, const Endpoint& from, Clock::time_point now);
  void on_hello(proto::Bytes b, const Endpoint& from, const AddressKey& key, Clock::time_point now);
  void on_request(proto::Bytes b, const Endpoint& from, const AddressKey& key, Clock::time_point now);
  // Never larger than the request it answers, and within the address's error budget.
  void send_error(const Endpoint& to, const AddressKey& key, std::size_t request_size, proto::WriteRecordError e, Clock::time_point now);
  std::uint64_t now_seconds(Clock::time_point now) const;

  UdpOptions options_;
  UdpStats stats_;
  UdpSocket socket_;
  CookieJar cookies_;
  std::shared_ptr<const UdpRegions> regions_;
  PreCookieTable pre_cookie_;
  TokenBucket hellos_total_;
  TestDropper drops_;
  ClientTable table_;
  PacedSender sender_;
  Clock::time_point started_ = Clock::now();
};

}  // namespace vod::server::udp
