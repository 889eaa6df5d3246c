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
#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
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
  std::printf("FLOOD sent_bytes=%llu received_bytes=%llu sent=%llu received=%llu cookies=%llu\n", static_cast<unsigned long long>(sent_bytes),
              static_cast<unsigned long long>(received_bytes), static_cast<unsigned long long>(sent), static_cast<unsigned long long>(received),
              static_cast<unsigned long long>(cookies));
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

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  std::string mode = a.empty() ? "" : a[0], host;
  double seconds = 3;
  int sources = 16;
  for (std::size_t i = 1; i + 1 < a.size(); i += 2) {
    if (a[i] == "--server" || a[i] == "--target") host = a[i + 1];
    else if (a[i] == "--seconds") seconds = std::stod(a[i + 1]);
    else if (a[i] == "--sources") sources = std::stoi(a[i + 1]);
  }
  if (mode == "flood" && !host.empty()) return flood(host, seconds, sources);
  if (mode == "spray" && !host.empty()) return spray(host, seconds);
  std::fprintf(stderr, "usage: udp_hostile flood --server HOST:PORT --seconds S [--sources N] | spray --target HOST:PORT --seconds S\n");
  return 2;
}
