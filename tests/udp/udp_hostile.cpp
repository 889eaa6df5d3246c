// SPDX-License-Identifier: LGPL-2.1-or-later
// udp_hostile: hostile traffic for the Write-Record tests.
//
//   udp_hostile flood --server HOST:PORT --seconds S [--sources N]
//       From N sockets (N source ports), sends the server a mix of garbage, truncated and malformed
//       requests, requests with forged cookies for huge ranges, unknown movies, and hellos, as
//       fast as it can, and reads whatever comes back. Prints one line:
//       FLOOD sent_bytes=.. received_bytes=.. sent=.. received=.. cookies=..
//       No address here ever echoes a cookie, so every byte received is an answer the server gave to
//       an address that proved nothing: it must be no more than what that address sent.
//
//   udp_hostile spray --target HOST:PORT --seconds S
//       Sends a receiver datagrams that look like Write-Record data (right magic, valid CRC) with
//       random sessions, epochs, records and offsets, and plain garbage. A receiver must drop them all.
//
//   udp_hostile abuse --server HOST:PORT --seconds S [--slow-ports N] [--greedy-ports M]
//                     [--slow-from ADDR] [--greedy-from ADDR] [--greedy-addresses K]
//                     [--movie NAME] [--length BYTES] [--requests-per-second R]
//       Abuse by clients that do everything by the book: each of N + M ports (the slow ones bound to
//       --slow-from, the greedy ones to the lowest free ports from 1025 of K addresses from
//       --greedy-from up: 127.0.0.3, 127.0.0.4, ...) does the cookie handshake for real, then
//         slow ports: ask for BYTES of the movie at rate 1 bit/s and at 1 Mbit/s, a new session id
//           each time (R requests a second in all), so jobs pile up and never finish;
//         greedy ports: keep asking for BYTES at 10 Gbit/s and never read what comes.
//       A port whose cookie is refused says hello again. Prints one line:
//       ABUSE ports=.. cookies=.. requests=.. hellos=.. errors=.. rate_limited=.. refused=.. data_datagrams=..
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "vod/protocol/name_hash.hpp"
#include "vod/protocol/write_record.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace vod::proto;

sockaddr_storage resolve(const std::string& hostport, socklen_t& len) {
  const auto colon = hostport.rfind(':');
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (colon == std::string::npos || getaddrinfo(hostport.substr(0, colon).c_str(), hostport.substr(colon + 1).c_str(), &hints, &res) != 0) {
    std::fprintf(stderr, "udp_hostile: cannot resolve %s\n", hostport.c_str());
    std::exit(2);
  }
  sockaddr_storage a{};
  std::memcpy(&a, res->ai_addr, res->ai_addrlen);
  len = res->ai_addrlen;
  freeaddrinfo(res);
  return a;
}

int flood(const std::string& server, double seconds, int sources) {
  socklen_t len = 0;
  const sockaddr_storage to = resolve(server, len);
  std::vector<int> fds;
  for (int i = 0; i < sources; ++i) {
    const int fd = socket(to.ss_family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    ::connect(fd, reinterpret_cast<const sockaddr*>(&to), len);
    fds.push_back(fd);
  }
  std::mt19937_64 rnd(7);
  std::uint64_t sent_bytes = 0, received_bytes = 0, sent = 0, received = 0, cookies = 0;
  auto send_one = [&](int fd, const std::vector<std::uint8_t>& b) {
    if (::send(fd, b.data(), b.size(), 0) > 0) {
      sent_bytes += b.size();
      ++sent;
    }
  };
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  for (std::uint64_t k = 0; Clock::now() < end; ++k) {
    const int fd = fds[k % fds.size()];
    WriteRecordRequest r;
    r.session_id = static_cast<std::uint32_t>(rnd());
    r.epoch = 1;
    r.record_seq = k;
    for (auto& b : r.cookie) b = static_cast<std::uint8_t>(rnd());
    r.region = WriteRecordRegion::movie;
    r.selector = rnd() % 2 ? rnd() : name_hash("test-480p-60s.ts");
    r.offset = 0;
    r.length = 16u << 20;
    r.buffer_length = 32u << 20;
    r.max_payload = 1400;
    r.rate_bps = 10'000'000'000ull;
    switch (k % 6) {
      case 0: send_one(fd, encode(r)); break;  // a forged cookie, a huge range, a known or unknown movie
      case 1: {
        auto b = encode(r);
        b.resize(20 + rnd() % 60);  // truncated
        send_one(fd, b);
        break;
      }
      case 2: {
        std::vector<std::uint8_t> g(1 + rnd() % 1400);
        for (auto& x : g) x = static_cast<std::uint8_t>(rnd());
        send_one(fd, g);  // garbage
        break;
      }
      case 3: {
        auto b = encode(r);
        b[40] = 9;  // an unknown region
        send_one(fd, b);
        break;
      }
      case 4: send_one(fd, encode(WriteRecordHello{rnd()})); break;
      case 5: {
        r.length = 0;  // malformed: an empty range
        send_one(fd, encode(r));
        break;
      }
    }
    if (k % 64 == 0) {
      for (int f : fds) {
        std::uint8_t buf[70000];
        for (ssize_t n; (n = ::recv(f, buf, sizeof buf, MSG_DONTWAIT)) > 0;) {
          received_bytes += static_cast<std::uint64_t>(n);
          ++received;
          cookies += decode_write_record_cookie(Bytes(buf, static_cast<std::size_t>(n))).ok();
        }
      }
    }
  }
  usleep(200'000);  // answers still in flight
  for (int f : fds) {
    std::uint8_t buf[70000];
    for (ssize_t n; (n = ::recv(f, buf, sizeof buf, MSG_DONTWAIT)) > 0;) {
      received_bytes += static_cast<std::uint64_t>(n);
      ++received;
    }
    close(f);
  }
  std::printf("FLOOD sent_bytes=%llu received_bytes=%llu sent=%llu received=%llu cookies=%llu\n",
              static_cast<unsigned long long>(sent_bytes), static_cast<unsigned long long>(received_bytes),
              static_cast<unsigned long long>(sent), static_cast<unsigned long long>(received), static_cast<unsigned long long>(cookies));
  return 0;
}

int spray(const std::string& target, double seconds) {
  socklen_t len = 0;
  const sockaddr_storage to = resolve(target, len);
  const int fd = socket(to.ss_family, SOCK_DGRAM, 0);
  std::mt19937_64 rnd(11);
  std::vector<std::uint8_t> payload(1400);
  std::uint64_t sent = 0;
  const auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  while (Clock::now() < end) {
    for (auto& x : payload) x = static_cast<std::uint8_t>(rnd());
    std::vector<std::uint8_t> b;
    if (rnd() % 3 == 0) {
      b.assign(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(1 + rnd() % payload.size()));
    } else {
      WriteRecordData d;
      d.session_id = static_cast<std::uint32_t>(rnd());
      d.epoch = static_cast<std::uint32_t>(rnd() % 4);
      d.record_seq = rnd() % 64;
      d.record_length = rnd() % 2 ? 1400 : rnd();
      d.record_offset = 0;
      d.buffer_offset = rnd() % 2 ? rnd() % (8u << 20) : rnd();
      d.payload = Bytes(payload);
      if (d.record_length < d.payload.size()) d.record_length = d.payload.size();
      b = encode(d);
    }
    if (sendto(fd, b.data(), b.size(), 0, reinterpret_cast<const sockaddr*>(&to), len) > 0) ++sent;
    if (sent % 256 == 0) usleep(1000);  // hostile, not a bandwidth test
  }
  close(fd);
  std::printf("SPRAY sent=%llu\n", static_cast<unsigned long long>(sent));
  return 0;
}

// One abusing port: a socket with a cookie once the handshake came back.
struct AbusePort {
  int fd = -1;
  bool greedy = false;
  bool has_cookie = false;
  Cookie cookie{};
  std::uint64_t nonce = 0;
  Clock::time_point hello_at{};
};

// `from` with `k` added to its last byte (IPv4: to the address): the k-th of a run of addresses.
std::string nth_address(const std::string& from, int k) {
  if (from.empty() || k == 0) return from;
  char text[INET6_ADDRSTRLEN] = "";
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, from.c_str(), &v4) == 1) {
    v4.s_addr = htonl(ntohl(v4.s_addr) + static_cast<std::uint32_t>(k));
    inet_ntop(AF_INET, &v4, text, sizeof text);
  } else if (inet_pton(AF_INET6, from.c_str(), &v6) == 1) {
    v6.s6_addr[15] = static_cast<std::uint8_t>(v6.s6_addr[15] + k);
    inet_ntop(AF_INET6, &v6, text, sizeof text);
  }
  return text;
}

int bound_socket(const sockaddr_storage& to, socklen_t to_len, const std::string& from, std::uint16_t port) {
  const int fd = socket(to.ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_storage local{};
  socklen_t local_len = 0;
  if (to.ss_family == AF_INET) {
    auto& a = reinterpret_cast<sockaddr_in&>(local);
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    if (!from.empty() && inet_pton(AF_INET, from.c_str(), &a.sin_addr) != 1) {
      std::fprintf(stderr, "udp_hostile: --slow-from/--greedy-from '%s' is not an IPv4 address\n", from.c_str());
      std::exit(2);
    }
    local_len = sizeof a;
  } else {
    auto& a = reinterpret_cast<sockaddr_in6&>(local);
    a.sin6_family = AF_INET6;
    a.sin6_port = htons(port);
    if (!from.empty() && inet_pton(AF_INET6, from.c_str(), &a.sin6_addr) != 1) {
      std::fprintf(stderr, "udp_hostile: --slow-from/--greedy-from '%s' is not an IPv6 address\n", from.c_str());
      std::exit(2);
    }
    local_len = sizeof a;
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), local_len) != 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&to), to_len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

struct AbuseOptions {
  double seconds = 10;
  int slow_ports = 256, greedy_ports = 8, greedy_addresses = 1;
  std::string slow_from, greedy_from, movie = "test-480p-60s.ts";
  std::uint64_t length = 16u << 20;
  double requests_per_second = 20000;
};

int abuse(const std::string& server, const AbuseOptions& o) {
  socklen_t len = 0;
  const sockaddr_storage to = resolve(server, len);
  std::vector<AbusePort> ports;
  std::uint16_t low = 1025;  // greedy ports: the lowest free ones (the old server served clients in port order)
  for (int i = 0; i < o.greedy_ports; ++i) {
    const std::string from = nth_address(o.greedy_from, i % std::max(1, o.greedy_addresses));
    int fd = -1;
    while (fd < 0 && low < 4096) fd = bound_socket(to, len, from, low++);
    if (fd < 0) fd = bound_socket(to, len, from, 0);
    if (fd < 0) {
      std::fprintf(stderr, "udp_hostile: cannot bind a greedy port on '%s': %s\n", from.c_str(), std::strerror(errno));
      return 2;
    }
    const int small = 64 << 10;  // what comes is never read: let the kernel drop it early
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    ports.push_back({fd, true});
  }
  for (int i = 0; i < o.slow_ports; ++i) {
    const int fd = bound_socket(to, len, o.slow_from, 0);
    if (fd < 0) {
      std::fprintf(stderr, "udp_hostile: cannot bind a slow port on '%s': %s\n", o.slow_from.c_str(), std::strerror(errno));
      return 2;
    }
    ports.push_back({fd, false});
  }
  std::mt19937_64 rnd(13);
  std::uint64_t requests = 0, hellos = 0, cookies = 0, errors = 0, rate_limited = 0, refused = 0, data = 0;
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  const auto tick = std::chrono::milliseconds(10);
  // Slow requests per tick over all slow ports; a greedy port asks once a tick.
  const double slow_per_tick = o.requests_per_second * 0.010;
  double slow_credit = 0;
  std::size_t next_slow = 0;
  std::uint64_t seq = 0;
  const std::uint64_t selector = name_hash(o.movie);
  auto send_request = [&](AbusePort& p, std::uint64_t rate) {
    WriteRecordRequest r;
    r.session_id = static_cast<std::uint32_t>(rnd());  // a new session each time: state per session must stay bounded
    r.epoch = 1;
    r.record_seq = ++seq;
    r.cookie = p.cookie;
    r.region = WriteRecordRegion::movie;
    r.selector = selector;
    r.offset = 0;
    r.length = o.length;
    r.buffer_length = o.length;
    r.max_payload = 1400;
    r.rate_bps = rate;
    const auto b = encode(r);
    if (::send(p.fd, b.data(), b.size(), 0) > 0) ++requests;
  };
  for (auto next = start; Clock::now() < end; next += tick) {
    const auto now = Clock::now();
    for (AbusePort& p : ports) {
      // What came back: cookies, errors (a refused cookie: hello again), data (counted, not kept).
      std::uint8_t buf[2048];
      for (int k = 0; k < 16; ++k) {
        const ssize_t n = ::recv(p.fd, buf, sizeof buf, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) break;
        const Bytes b(buf, std::min<std::size_t>(static_cast<std::size_t>(n), sizeof buf));
        if (auto c = decode_write_record_cookie(b); c && c->nonce == p.nonce && !p.has_cookie) {
          p.cookie = c->cookie;
          p.has_cookie = true;
          ++cookies;
        } else if (auto e = decode_write_record_error(b)) {
          ++errors;
          if (e->code == RejectCode::bad_cookie) p.has_cookie = false;
          else if (e->code == RejectCode::rate_limited) ++rate_limited;
          else ++refused;
        } else if (b.size() >= sizeof(WireHeader) && b[5] == static_cast<std::uint8_t>(MessageType::write_record_data)) {
          ++data;
        }
      }
      if (!p.has_cookie && now - p.hello_at > std::chrono::milliseconds(300)) {
        p.nonce = rnd();
        p.hello_at = now;
        const auto h = encode(WriteRecordHello{p.nonce});
        if (::send(p.fd, h.data(), h.size(), 0) > 0) ++hellos;
      }
      if (p.greedy && p.has_cookie) send_request(p, 10'000'000'000ull);
    }
    if (o.slow_ports > 0) {
      slow_credit += slow_per_tick;
      for (int tries = 0; slow_credit >= 1 && tries < o.slow_ports; ++tries) {
        AbusePort& p = ports[static_cast<std::size_t>(o.greedy_ports) + next_slow];
        next_slow = (next_slow + 1) % static_cast<std::size_t>(o.slow_ports);
        if (!p.has_cookie) continue;
        send_request(p, seq % 2 ? 1 : 1'000'000);  // 1 bit/s, or 1 Mbit/s
        slow_credit -= 1;
      }
      slow_credit = std::min(slow_credit, slow_per_tick);  // ports still without a cookie: the credit does not pile up
    }
    std::this_thread::sleep_until(next + tick);
  }
  for (AbusePort& p : ports) close(p.fd);
  std::printf("ABUSE ports=%zu cookies=%llu requests=%llu hellos=%llu errors=%llu rate_limited=%llu refused=%llu data_datagrams=%llu\n",
              ports.size(), static_cast<unsigned long long>(cookies), static_cast<unsigned long long>(requests),
              static_cast<unsigned long long>(hellos), static_cast<unsigned long long>(errors),
              static_cast<unsigned long long>(rate_limited), static_cast<unsigned long long>(refused),
              static_cast<unsigned long long>(data));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  std::string mode = a.empty() ? "" : a[0], host;
  double seconds = 3;
  int sources = 16;
  AbuseOptions abuse_options;
  for (std::size_t i = 1; i + 1 < a.size(); i += 2) {
    if (a[i] == "--server" || a[i] == "--target") host = a[i + 1];
    else if (a[i] == "--seconds") seconds = std::stod(a[i + 1]);
    else if (a[i] == "--sources") sources = std::stoi(a[i + 1]);
    else if (a[i] == "--slow-ports") abuse_options.slow_ports = std::clamp(std::stoi(a[i + 1]), 0, 4096);
    else if (a[i] == "--greedy-ports") abuse_options.greedy_ports = std::clamp(std::stoi(a[i + 1]), 0, 256);
    else if (a[i] == "--slow-from") abuse_options.slow_from = a[i + 1];
    else if (a[i] == "--greedy-from") abuse_options.greedy_from = a[i + 1];
    else if (a[i] == "--greedy-addresses") abuse_options.greedy_addresses = std::clamp(std::stoi(a[i + 1]), 1, 64);
    else if (a[i] == "--movie") abuse_options.movie = a[i + 1];
    else if (a[i] == "--length") abuse_options.length = std::stoull(a[i + 1]);
    else if (a[i] == "--requests-per-second") abuse_options.requests_per_second = std::clamp(std::stod(a[i + 1]), 1.0, 200000.0);
  }
  abuse_options.seconds = std::clamp(seconds, 0.0, 600.0);  // bounded in time whatever is asked
  if (mode == "flood" && !host.empty()) return flood(host, seconds, sources);
  if (mode == "spray" && !host.empty()) return spray(host, seconds);
  if (mode == "abuse" && !host.empty()) return abuse(host, abuse_options);
  std::fprintf(stderr,
               "usage: udp_hostile flood --server HOST:PORT --seconds S [--sources N]\n"
               "     | spray --target HOST:PORT --seconds S\n"
               "     | abuse --server HOST:PORT --seconds S [--slow-ports N] [--greedy-ports M] [--slow-from ADDR] [--greedy-from ADDR]\n"
               "             [--greedy-addresses K] [--movie NAME] [--length BYTES] [--requests-per-second R]\n");
  return 2;
}
