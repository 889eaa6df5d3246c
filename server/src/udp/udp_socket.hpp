// SPDX-License-Identifier: LGPL-2.1-or-later
// The Write-Record service's socket and its batched I/O: opened with the options every answer
// needs (large buffers, never fragment, the local address of each request, UDP GSO probed,
// MSG_ZEROCOPY if asked), batches of requests received with one recvmmsg, and batches of trains
// (consecutive datagrams of one record, one sendmsg each) sent with one sendmmsg. It knows nothing
// of clients, records or pacing: udp_service.cpp decides what to send, this sends it.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "udp/udp_admission.hpp"
#include "vod/protocol/write_record.hpp"
#include "vod/unique_fd.hpp"

namespace vod::server::udp {

// Where a datagram goes: the address and port the request came from, and the local address it
// came to (IP_PKTINFO / IPV6_PKTINFO), which every answer leaves from: a server bound to a
// wildcard on a host with several addresses answers from the one its client asked, which is the
// only one a client's connected socket accepts.
struct Endpoint {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int local_family = 0;        // AF_INET or AF_INET6 when the local address is known
  in6_addr local{};            // IPv4 in its first 4 bytes
  unsigned local_ifindex = 0;  // IPv6 link-local answers need it
};

// One sendmsg: consecutive datagrams of one record (trains.hpp fills it), a GSO train when more
// than one. Each datagram is two iovecs: its header, then its payload.
inline constexpr std::size_t kPktinfoSpace = CMSG_SPACE(sizeof(in6_pktinfo));  // the larger of the two families'
struct Train {
  proto::WireWriteRecordDataHeader headers[kGsoSegments];
  iovec iov[2 * kGsoSegments];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(std::uint16_t)) + kPktinfoSpace];
  Endpoint to;
  std::size_t segments = 0, bytes = 0;
  bool zero_copy = false;  // sent with MSG_ZEROCOPY: its headers are ZeroCopySends', not these
};

std::uint16_t port_of(const sockaddr_storage& a);
std::string describe(const sockaddr_storage& a);  // "192.0.2.1:5000", for logs

class UdpSocket {
 public:
  static constexpr std::size_t kBatch = 64;  // datagrams per recvmmsg, trains per sendmmsg

  // Throws std::runtime_error naming the option (--udp-port) when the socket cannot be had.
  // `zero_copy`: ask for SO_ZEROCOPY (zero_copy() says whether the kernel took it).
  UdpSocket(const std::string& bind, std::uint16_t port, bool zero_copy);
  ~UdpSocket();
  UdpSocket(const UdpSocket&) = delete;
  UdpSocket& operator=(const UdpSocket&) = delete;

  int fd() const noexcept { return fd_.get(); }
  std::uint16_t port() const noexcept { return port_; }
  bool gso() const noexcept { return gso_; }
  bool zero_copy() const noexcept { return zero_copy_; }

  // Receives up to kBatch datagrams without waiting; 0 when none is there. received(i) is valid
  // until the next receive().
  std::size_t receive();
  struct Datagram {
    std::span<const std::uint8_t> bytes;
    Endpoint from;
    bool truncated = false;  // larger than any request: dropped
  };
  Datagram received(std::size_t i) const;

  // One small datagram (a cookie, an error), from the local address `to` came to. Best effort.
  void send_small(const Endpoint& to, std::span<const std::uint8_t> bytes);
  // The trains, in order, in one sendmmsg (at most kBatch; `flags` adds MSG_ZEROCOPY). Returns how
  // many the socket took: what it did not take is lost as if the network dropped it.
  std::size_t send(std::span<Train* const> trains, int flags);

 private:
  struct Buffers;  // allocated once, so neither path allocates per datagram or per call
  UniqueFd fd_;
  std::uint16_t port_ = 0;
  bool gso_ = false, zero_copy_ = false;
  std::unique_ptr<Buffers> buffers_;
};

}  // namespace vod::server::udp
