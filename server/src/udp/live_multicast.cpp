// SPDX-License-Identifier: LGPL-2.1-or-later
#include "udp/live_multicast.hpp"

#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "vod/log.hpp"
#include "vod/protocol/write_record.hpp"

namespace vod::server::udp {
namespace {

constexpr std::size_t kTsPacket = 188;
constexpr std::size_t kBatch = 64;  // datagrams per sendmmsg

std::runtime_error sys_error(const std::string& call, const std::string& context) {
  return std::runtime_error(call + " (" + context + "): " + std::strerror(errno));
}

}  // namespace

MulticastOptions parse_multicast(const std::string& text) {
  MulticastOptions o;
  std::string host = text;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos) throw std::invalid_argument("--live-multicast '" + text + "': an IPv6 group is written [GROUP]:PORT");
    host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') throw std::invalid_argument("--live-multicast '" + text + "': expected :PORT after ]");
      port = text.substr(close + 2);
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos && text.find(':') == colon) {
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (!port.empty()) {
    unsigned long p = 0;
    try {
      std::size_t used = 0;
      p = std::stoul(port, &used);
      if (used != port.size()) p = 0;
    } catch (const std::exception&) {
      p = 0;
    }
    if (p == 0 || p > 65535) throw std::invalid_argument("--live-multicast '" + text + "': the port must be 1..65535");
    o.port = static_cast<std::uint16_t>(p);
  }
  in_addr v4{};
  in6_addr v6{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) {
    if (!IN_MULTICAST(ntohl(v4.s_addr)))
      throw std::invalid_argument("--live-multicast '" + text + "': " + host +
                                  " is not a multicast address (224.0.0.0/4; e.g. 239.255.0.1)");
  } else if (inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
    if (!IN6_IS_ADDR_MULTICAST(&v6))
      throw std::invalid_argument("--live-multicast '" + text + "': " + host + " is not a multicast address (ff00::/8)");
  } else {
    throw std::invalid_argument("--live-multicast '" + text + "': GROUP must be a numeric multicast address, e.g. 239.255.0.1:7472");
  }
  o.group = host;
  return o;
}

MulticastSender::MulticastSender(const MulticastOptions& options) {
  payload_ = static_cast<std::uint32_t>(std::max<std::size_t>(kTsPacket, options.payload / kTsPacket * kTsPacket));
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(options.port);
  if (const int rc = getaddrinfo(options.group.c_str(), port.c_str(), &hints, &res); rc != 0)
    throw std::runtime_error("getaddrinfo (" + options.group + "): " + gai_strerror(rc));
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> info(res, freeaddrinfo);
  const int family = info->ai_family;
  fd_.reset(socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd_) throw sys_error("socket", "live multicast");
  const int fd = fd_.get();
  const int loop = 1;  // receivers on this host see the group too
  if (family == AF_INET) {
    const unsigned char ttl = static_cast<unsigned char>(std::clamp(options.ttl, 1, 255));
    const unsigned char loop4 = 1;
    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl);
    setsockopt(fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop4, sizeof loop4);
    const int pmtu = IP_PMTUDISC_DO;  // never fragment: a lost fragment loses the whole datagram
    setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
    if (!options.interface.empty()) {
      in_addr local{};
      if (inet_pton(AF_INET, options.interface.c_str(), &local) != 1)
        throw std::invalid_argument("--live-multicast-interface '" + options.interface +
                                    "' must be the IPv4 address of the interface to send from");
      if (setsockopt(fd, IPPROTO_IP, IP_MULTICAST_IF, &local, sizeof local) != 0)
        throw sys_error("setsockopt(IP_MULTICAST_IF)", options.interface);
    }
  } else {
    const int hops = std::clamp(options.ttl, 1, 255);
    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_HOPS, &hops, sizeof hops);
    setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_LOOP, &loop, sizeof loop);
    if (!options.interface.empty()) {
      const unsigned index = if_nametoindex(options.interface.c_str());
      if (index == 0 || setsockopt(fd, IPPROTO_IPV6, IPV6_MULTICAST_IF, &index, sizeof index) != 0)
        throw std::invalid_argument("--live-multicast-interface '" + options.interface + "' must name an interface for an IPv6 group");
    }
  }
  if (connect(fd, info->ai_addr, info->ai_addrlen) != 0)
    throw sys_error("connect", options.group + ":" + port + " (is there a route for multicast? give --live-multicast-interface)");
  destination_ = (family == AF_INET6 ? "[" + options.group + "]" : options.group) + ":" + port;
}

MulticastSender::~MulticastSender() = default;

void MulticastSender::send(const MulticastRecord& r) {
  proto::WriteRecordData d;
  d.session_id = r.channel_id;
  d.epoch = r.stream_id;
  d.record_seq = r.number;
  d.record_length = r.bytes.size();
  d.buffer_offset = r.stream_offset;
  const std::uint16_t flags = static_cast<std::uint16_t>((r.flags & proto::kRecordLiveFlags) | proto::kRecordStreamOffset);

  // Headers and iovecs for one batch; the payload is sent from the record's bytes (gather I/O).
  std::vector<proto::WireWriteRecordDataHeader> headers(kBatch);
  std::vector<iovec> iov(2 * kBatch);
  std::vector<mmsghdr> msgs(kBatch);
  const std::size_t total = r.bytes.size();
  const unsigned copies = total == 0 ? 3 : 1;  // an end of stream is one empty datagram: send it thrice
  std::size_t at = 0;
  unsigned sent_copies = 0;
  while (total == 0 ? sent_copies < copies : at < total) {
    std::size_t n = 0;
    while (n < kBatch && (total == 0 ? sent_copies < copies : at < total)) {
      const std::size_t len = std::min<std::size_t>(payload_, total - at);
      d.record_offset = at;
      d.payload = r.bytes.subspan(at, len);
      d.flags = static_cast<std::uint16_t>(flags | (at + len == total ? proto::kRecordLastDatagram : 0));
      headers[n] = proto::data_header(d);
      iov[2 * n] = {&headers[n], sizeof headers[n]};
      iov[2 * n + 1] = {const_cast<std::uint8_t*>(r.bytes.data() + at), len};
      msgs[n] = {};
      msgs[n].msg_hdr.msg_iov = &iov[2 * n];
      msgs[n].msg_hdr.msg_iovlen = len ? 2 : 1;
      at += len;
      if (total == 0) ++sent_copies;
      ++n;
    }
    std::size_t done = 0;
    while (done < n) {
      const int rc = sendmmsg(fd_.get(), msgs.data() + done, static_cast<unsigned>(n - done), 0);
      if (rc < 0) {
        if (errno == EINTR) continue;
        // ENOBUFS, a network that went away: the datagrams are lost, as they could be on the wire.
        ++stats_.send_errors;
        if (stats_.send_errors == 1 || stats_.send_errors % 1000 == 0)
          log::warn("live", "multicast to " + destination_ + ": sendmmsg: " + std::strerror(errno) + " (" +
                                std::to_string(stats_.send_errors) + " times so far); receivers see holes");
        break;
      }
      for (int i = 0; i < rc; ++i) stats_.bytes += msgs[done + static_cast<std::size_t>(i)].msg_len;
      stats_.datagrams += static_cast<std::uint64_t>(rc);
      done += static_cast<std::size_t>(rc);
    }
  }
  ++stats_.records;
}

}  // namespace vod::server::udp
