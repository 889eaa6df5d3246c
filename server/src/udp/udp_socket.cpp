// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/udp_socket.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/udp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "vod/log.hpp"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103  // linux/udp.h: GSO segment size (Linux 4.18+)
#endif

namespace vod::server::udp {

namespace {

constexpr std::size_t kRecvSlot = 2048;  // larger datagrams are not requests: truncated, dropped

// The local address a datagram came to, from its IP_PKTINFO or IPV6_PKTINFO control message
// (family 0 when it carries neither).
void read_local(const msghdr& m, Endpoint& e) {
  e.local_family = 0;
  for (const cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&m), const_cast<cmsghdr*>(c))) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      in_pktinfo pi;
      std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
      e.local_family = AF_INET;
      e.local = {};
      std::memcpy(&e.local, &pi.ipi_addr, sizeof pi.ipi_addr);
      e.local_ifindex = static_cast<unsigned>(pi.ipi_ifindex);
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      in6_pktinfo pi;
      std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
      e.local_family = AF_INET6;
      e.local = pi.ipi6_addr;
      e.local_ifindex = pi.ipi6_ifindex;
    }
  }
}

// Appends to `m`'s control buffer (`used` bytes of it taken so far) the message that makes a send
// leave from the local address `to` came to; nothing when that is unknown. Clears msg_control when
// nothing at all was added.
void add_source(msghdr& m, std::size_t used, const Endpoint& to) {
  auto* c = reinterpret_cast<cmsghdr*>(static_cast<char*>(m.msg_control) + used);
  if (to.local_family == AF_INET) {
    in_pktinfo pi{};
    std::memcpy(&pi.ipi_spec_dst, &to.local, sizeof pi.ipi_spec_dst);  // the source; the route picks the interface
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof pi);
    std::memcpy(CMSG_DATA(c), &pi, sizeof pi);
    used += CMSG_SPACE(sizeof pi);
  } else if (to.local_family == AF_INET6) {
    in6_pktinfo pi{};
    pi.ipi6_addr = to.local;
    pi.ipi6_ifindex = IN6_IS_ADDR_LINKLOCAL(&to.local) ? to.local_ifindex : 0;
    c->cmsg_level = IPPROTO_IPV6;
    c->cmsg_type = IPV6_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof pi);
    std::memcpy(CMSG_DATA(c), &pi, sizeof pi);
    used += CMSG_SPACE(sizeof pi);
  }
  m.msg_controllen = used;
  if (used == 0) m.msg_control = nullptr;
}

}  // namespace

std::uint16_t port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return 0;
}

std::string describe(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  if (a.ss_family == AF_INET) inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in&>(a).sin_addr, host, sizeof host);
  else if (a.ss_family == AF_INET6) inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6&>(a).sin6_addr, host, sizeof host);
  return std::string(host) + ":" + std::to_string(port_of(a));
}

struct UdpSocket::Buffers {
  std::uint8_t in[kBatch][kRecvSlot];
  mmsghdr in_msgs[kBatch];
  iovec in_iov[kBatch];
  sockaddr_storage from[kBatch];
  alignas(cmsghdr) char in_control[kBatch][kPktinfoSpace];
  mmsghdr out_msgs[kBatch];
};

UdpSocket::UdpSocket(const std::string& bind_to, std::uint16_t port, bool zero_copy) : buffers_(std::make_unique<Buffers>()) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int err = getaddrinfo(bind_to == "0.0.0.0" || bind_to.empty() ? nullptr : bind_to.c_str(), service.c_str(), &hints, &res))
    throw std::runtime_error("--udp-port: cannot resolve " + bind_to + ": " + gai_strerror(err));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> info(res, freeaddrinfo);
  fd_.reset(socket(info->ai_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!fd_) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const int fd = fd_.get();
  const int buf = 8 << 20, pmtu = IP_PMTUDISC_DO;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf) != 0) setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  // Never fragment: a datagram larger than the path MTU fails to send rather than leaving in pieces.
  if (info->ai_family == AF_INET) setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
  // The address each request came to, so that answers leave from it (Endpoint).
  const int on = 1;
  setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof on);  // IPv4, and IPv4-mapped on an IPv6 socket
  if (info->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof on);
  if (::bind(fd, info->ai_addr, info->ai_addrlen) != 0)
    throw std::runtime_error("--udp-port " + service + ": cannot bind " + bind_to + ": " + std::strerror(errno));
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  port_ = port_of(bound);
  // UDP GSO where the kernel has it: probe by setting a socket-wide segment size, then clear it
  // (each send sets its own).
  int segment = 1400;
  gso_ = setsockopt(fd, SOL_UDP, UDP_SEGMENT, &segment, sizeof segment) == 0;
  segment = 0;
  if (gso_) setsockopt(fd, SOL_UDP, UDP_SEGMENT, &segment, sizeof segment);
  if (zero_copy) {
    zero_copy_ = setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof on) == 0;
    if (!zero_copy_)
      log::warn("udp", std::string("--udp-zero-copy: the kernel refused SO_ZEROCOPY (") + std::strerror(errno) + "); sends are copied");
  }
}

UdpSocket::~UdpSocket() = default;

std::size_t UdpSocket::receive() {
  Buffers& x = *buffers_;
  for (std::size_t i = 0; i < kBatch; ++i) {
    x.in_iov[i] = {x.in[i], kRecvSlot};
    x.in_msgs[i] = {};
    msghdr& m = x.in_msgs[i].msg_hdr;
    m.msg_iov = &x.in_iov[i];
    m.msg_iovlen = 1;
    m.msg_name = &x.from[i];
    m.msg_namelen = sizeof x.from[i];
    m.msg_control = x.in_control[i];
    m.msg_controllen = sizeof x.in_control[i];
  }
  const int n = recvmmsg(fd_.get(), x.in_msgs, kBatch, MSG_DONTWAIT, nullptr);
  return n > 0 ? static_cast<std::size_t>(n) : 0;
}

UdpSocket::Datagram UdpSocket::received(std::size_t i) const {
  const Buffers& x = *buffers_;
  const msghdr& m = x.in_msgs[i].msg_hdr;
  Datagram d;
  d.truncated = (m.msg_flags & MSG_TRUNC) != 0;
  d.bytes = {x.in[i], std::min<std::size_t>(x.in_msgs[i].msg_len, kRecvSlot)};
  d.from.addr = x.from[i];
  d.from.len = std::min<socklen_t>(m.msg_namelen, sizeof d.from.addr);
  read_local(m, d.from);
  return d;
}

void UdpSocket::send_small(const Endpoint& to, std::span<const std::uint8_t> bytes) {
  iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};  // sendmsg reads, never writes
  alignas(cmsghdr) char control[kPktinfoSpace];
  msghdr m{};
  m.msg_name = const_cast<sockaddr_storage*>(&to.addr);
  m.msg_namelen = to.len;
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  add_source(m, 0, to);
  if (sendmsg(fd_.get(), &m, MSG_DONTWAIT) < 0) log::debug("udp", "sendmsg " + describe(to.addr) + ": " + std::strerror(errno));
}

std::size_t UdpSocket::send(std::span<Train* const> trains, int flags) {
  if (trains.empty()) return 0;
  const std::size_t n = std::min(trains.size(), kBatch);
  mmsghdr* out = buffers_->out_msgs;
  for (std::size_t o = 0; o < n; ++o) {
    Train& t = *trains[o];
    msghdr& m = out[o].msg_hdr;
    m = {};
    m.msg_name = &t.to.addr;
    m.msg_namelen = t.to.len;
    m.msg_iov = t.iov;
    m.msg_iovlen = 2 * t.segments;
    m.msg_control = t.control;
    std::size_t used = 0;
    if (t.segments > 1) {  // a GSO train: every segment but the last is this long
      cmsghdr* cm = reinterpret_cast<cmsghdr*>(t.control);
      cm->cmsg_level = SOL_UDP;
      cm->cmsg_type = UDP_SEGMENT;
      cm->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
      const auto segment = static_cast<std::uint16_t>(t.iov[0].iov_len + t.iov[1].iov_len);
      std::memcpy(CMSG_DATA(cm), &segment, sizeof segment);
      used = CMSG_SPACE(sizeof(std::uint16_t));
    }
    add_source(m, used, t.to);
  }
  const int sent = sendmmsg(fd_.get(), out, static_cast<unsigned>(n), MSG_DONTWAIT | flags);
  // A zero-copy send can also fail for want of option memory (ENOBUFS): as a full socket.
  if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS)
    log::warn("udp", std::string("sendmmsg: ") + std::strerror(errno));
  return sent > 0 ? static_cast<std::size_t>(sent) : 0;
}

}  // namespace vod::server::udp
