// SPDX-License-Identifier: LGPL-2.1-or-later
// The Write-Record service's options and figures (udp_service.hpp has the service).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "udp/address_budgets.hpp"
#include "udp/test_drop.hpp"
#include "udp/udp_admission.hpp"
#include "vod/defaults.hpp"

namespace vod::server::udp {

// Why `max_payload` cannot be a datagram's payload (nullopt when it can): the one check that
// --udp-max-payload and UdpOptions share (defaults::kUdpPayloadMin..kUdpPayloadMax).
std::optional<std::string> max_payload_problem(std::uint32_t max_payload);

struct UdpOptions {
  std::string bind = "0.0.0.0";
  std::uint16_t port = defaults::kUdpPort;
  double max_rate_bps = 1e9;                             // the whole server
  double client_rate_bps = defaults::kUdpClientRateBps;  // one client address (IPv6: /64) at most, all its ports and sessions together
  double min_rate_bps = 1e6;                             // the floor: a request that asks for less is refused
  std::uint32_t max_payload = defaults::kUdpMaxPayload;  // bytes per datagram at most (clients ask for their path MTU's)
  std::size_t max_jobs_per_client = 128;                 // ranges queued per client address
  std::size_t max_sessions_per_client = 32;              // sessions (and their epochs) per client address
  std::size_t max_clients = 4096;                        // client addresses with state, after their cookie verified
  std::size_t max_jobs = 65536;                          // ranges queued in all
  JobLife job_life;                                      // deadlines (job_deadline)
  std::chrono::milliseconds idle_client{30000};          // an address with nothing queued is forgotten after this
  std::size_t pre_cookie_slots = 16384;                  // the fixed table of hello and error budgets (16 bytes a slot)
  PreCookieTable::Limits pre_cookie;
  bool zero_copy = false;                  // --udp-zero-copy: MSG_ZEROCOPY sends (zero_copy_sends.hpp)
  std::size_t zero_copy_max_pinned = 256;  // sends pinned at once at most; beyond, a send is copied
  TestDrop test_drop;                      // --udp-test-drop (test_drop.hpp); sends one datagram per sendmsg while set
};

// Throws std::invalid_argument naming the option for options out of range.
UdpOptions validated(const UdpOptions& o);

struct UdpStats {
  std::uint64_t hellos = 0, requests = 0, datagrams = 0, bytes = 0, sends = 0, errors_sent = 0;
  std::uint64_t dropped = 0;  // malformed, unexpected, or over a rate limit for errors
  std::uint64_t bad_cookies = 0, rate_limited = 0, superseded = 0, test_dropped = 0;
  std::uint64_t expired = 0;            // jobs dropped at their deadline, not sent in full
  std::uint64_t clients_forgotten = 0;  // addresses whose state went (idle, or evicted for a new one)
};

}  // namespace vod::server::udp
