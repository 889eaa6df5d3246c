// SPDX-License-Identifier: LGPL-2.1-or-later
#include "vod/client/multicast_live_session.hpp"

#include <arpa/inet.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "vod/log.hpp"
#include "vod/protocol/write_record.hpp"

namespace vod::client {
namespace {

constexpr std::size_t kBatch = 32;           // datagrams per recvmmsg
constexpr std::size_t kMaxDatagram = 65536;  // larger ones cannot exist over UDP

struct Group {
  std::string host;
  std::uint16_t port = kLiveMulticastPort;
};

Group parse_group(const std::string& text) {
  Group g;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos)
      throw ClientError(ErrorKind::usage, "--udp-group '" + text + "': an IPv6 group is written [GROUP]:PORT");
    g.host = text.substr(1, close - 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') throw ClientError(ErrorKind::usage, "--udp-group '" + text + "': expected :PORT after ]");
      port = text.substr(close + 2);
    }
  } else if (const auto colon = text.rfind(':'); colon != std::string::npos && text.find(':') == colon) {
    g.host = text.substr(0, colon);
    port = text.substr(colon + 1);
  } else {
    g.host = text;
  }
  if (!port.empty()) {
    char* end = nullptr;
    const unsigned long p = std::strtoul(port.c_str(), &end, 10);
    if (*end != '\0' || p == 0 || p > 65535) throw ClientError(ErrorKind::usage, "--udp-group '" + text + "': the port must be 1..65535");
    g.port = static_cast<std::uint16_t>(p);
  }
  return g;
}

[[noreturn]] void fail_socket(int fd, const std::string& call, const std::string& context) {
  const std::string why = std::strerror(errno);
  if (fd >= 0) close(fd);
  throw ClientError(ErrorKind::server_unreachable, call + " (" + context + "): " + why);
}

proto::CatalogEntry find_channel(const Uri& uri, const MulticastLiveOptions& o) {
  Uri catalog_uri = uri;
  catalog_uri.movie.reset();
  catalog_uri.live = false;
  SessionOptions so;
  so.transport = Transport::udp;
  so.udp = o.udp;
  so.connect_timeout = o.connect_timeout;
  so.reconnect.give_up_after = std::chrono::milliseconds(0);
  Session catalog(catalog_uri, so);
  std::string live_names;
  for (const auto& e : catalog.catalog().entries) {
    if (!(e.flags & proto::kEntryLive)) continue;
    if (e.name == *uri.movie) return e;
    live_names += (live_names.empty() ? "" : ", ") + e.name;
  }
  for (const auto& e : catalog.catalog().entries)
    if (e.name == *uri.movie)
      throw ClientError(ErrorKind::unknown_movie, "'" + e.name + "' on " + catalog.server() + " is a movie, not a live channel: rdma://" +
                                                      uri.host + "/" + percent_encode_path(e.name));
  throw ClientError(ErrorKind::unknown_movie, catalog.server() + " has no live channel '" + *uri.movie +
                                                  "'; its live channels: " + (live_names.empty() ? std::string("none") : live_names));
}

}  // namespace

MulticastLiveSession::MulticastLiveSession(Uri uri, MulticastLiveOptions options)
    : uri_(std::move(uri)),
      options_(std::move(options)),
      assembler_(proto::live_channel_id(uri_.movie.value_or("")), options_.ring_bytes, options_.hole_timeout),
      scratch_(kBatch * kMaxDatagram) {
  if (!uri_.movie || !uri_.live)
    throw ClientError(ErrorKind::usage, "a live session needs a live channel URI: rdma://host[:port]/live/NAME");
  if (options_.group.empty())
    throw ClientError(ErrorKind::usage,
                      "live over UDP is multicast: give the group the server sends to (its --live-multicast), "
                      "e.g. --udp-group 239.255.0.1:7472");
  const Group group = parse_group(options_.group);
  channel_ = find_channel(uri_, options_);

  // The only address datagrams are taken from: the server's (every address its name resolves to).
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* res = nullptr;
  if (int err = getaddrinfo(uri_.host.c_str(), nullptr, &hints, &res))
    throw ClientError(ErrorKind::server_unreachable, "cannot resolve " + uri_.host + ": " + gai_strerror(err));
  for (addrinfo* a = res; a; a = a->ai_next) {
    sockaddr_storage s{};
    std::memcpy(&s, a->ai_addr, a->ai_addrlen);
    server_addresses_.push_back(s);
  }
  freeaddrinfo(res);

  hints = {};
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  const std::string port = std::to_string(group.port);
  if (int err = getaddrinfo(group.host.c_str(), port.c_str(), &hints, &res))
    throw ClientError(ErrorKind::usage,
                      "--udp-group '" + options_.group + "': " + group.host + " is not a numeric address (" + gai_strerror(err) + ")");
  const int family = res->ai_family;
  sockaddr_storage bind_to{};
  std::memcpy(&bind_to, res->ai_addr, res->ai_addrlen);
  const socklen_t bind_len = res->ai_addrlen;
  freeaddrinfo(res);
  group_text_ = (family == AF_INET6 ? "[" + group.host + "]" : group.host) + ":" + port;

  fd_ = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) fail_socket(-1, "socket", "multicast " + group_text_);
  const int one = 1;
  setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // several viewers on one host share the port
  // A burst of records must fit while the reader is busy: as much as the ring, where allowed.
  const int buf = static_cast<int>(std::min<std::size_t>(options_.ring_bytes, 64u << 20));
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  // Bound to the group address, the socket takes only that group's datagrams on the port.
  if (bind(fd_, reinterpret_cast<const sockaddr*>(&bind_to), bind_len) != 0) fail_socket(fd_, "bind", group_text_);
  if (family == AF_INET) {
    const auto* g = reinterpret_cast<const sockaddr_in*>(&bind_to);
    if (!IN_MULTICAST(ntohl(g->sin_addr.s_addr))) {
      close(fd_);
      throw ClientError(ErrorKind::usage, "--udp-group '" + options_.group + "' is not a multicast address (224.0.0.0/4)");
    }
    ip_mreq mreq{};
    mreq.imr_multiaddr = g->sin_addr;
    mreq.imr_interface.s_addr = htonl(INADDR_ANY);
    if (!options_.interface.empty() && inet_pton(AF_INET, options_.interface.c_str(), &mreq.imr_interface) != 1) {
      close(fd_);
      throw ClientError(ErrorKind::usage, "--udp-interface '" + options_.interface + "' must be the IPv4 address of an interface here");
    }
    if (setsockopt(fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0)
      fail_socket(fd_, "setsockopt(IP_ADD_MEMBERSHIP)", group_text_ + " (is there a route for multicast? give --udp-interface)");
  } else {
    const auto* g = reinterpret_cast<const sockaddr_in6*>(&bind_to);
    if (!IN6_IS_ADDR_MULTICAST(&g->sin6_addr)) {
      close(fd_);
      throw ClientError(ErrorKind::usage, "--udp-group '" + options_.group + "' is not a multicast address (ff00::/8)");
    }
    ipv6_mreq mreq{};
    mreq.ipv6mr_multiaddr = g->sin6_addr;
    mreq.ipv6mr_interface = options_.interface.empty() ? 0 : if_nametoindex(options_.interface.c_str());
    if (setsockopt(fd_, IPPROTO_IPV6, IPV6_JOIN_GROUP, &mreq, sizeof mreq) != 0)
      fail_socket(fd_, "setsockopt(IPV6_JOIN_GROUP)", group_text_);
  }
  log::info("client", "live channel '" + channel_.name + "' by multicast from " + group_text_ + " (server " + uri_.host + "), ring of " +
                          std::to_string(options_.ring_bytes >> 10) + " KiB, hole timeout " +
                          std::to_string(options_.hole_timeout.count()) + " ms");
}

MulticastLiveSession::~MulticastLiveSession() {
  if (fd_ >= 0) close(fd_);
}

bool MulticastLiveSession::from_server(const sockaddr_storage& from) const {
  for (const auto& s : server_addresses_) {
    if (s.ss_family != from.ss_family) continue;
    if (from.ss_family == AF_INET &&
        reinterpret_cast<const sockaddr_in&>(s).sin_addr.s_addr == reinterpret_cast<const sockaddr_in&>(from).sin_addr.s_addr)
      return true;
    if (from.ss_family == AF_INET6 && std::memcmp(&reinterpret_cast<const sockaddr_in6&>(s).sin6_addr,
                                                  &reinterpret_cast<const sockaddr_in6&>(from).sin6_addr, sizeof(in6_addr)) == 0)
      return true;
  }
  return false;
}

void MulticastLiveSession::drain_socket() {
  std::vector<mmsghdr> msgs(kBatch);
  std::vector<iovec> iov(kBatch);
  std::vector<sockaddr_storage> from(kBatch);
  for (;;) {
    for (std::size_t i = 0; i < kBatch; ++i) {
      iov[i] = {scratch_.data() + i * kMaxDatagram, kMaxDatagram};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof from[i];
    }
    const int n = recvmmsg(fd_, msgs.data(), kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) return;
    const auto now = MulticastAssembler::Clock::now();
    for (int i = 0; i < n; ++i) {
      const auto& m = msgs[static_cast<std::size_t>(i)];
      if (m.msg_hdr.msg_flags & MSG_TRUNC) {
        ++receive_.dropped_truncated;
        continue;
      }
      if (!from_server(from[static_cast<std::size_t>(i)])) {
        ++receive_.dropped_source;
        continue;
      }
      const proto::Bytes datagram(scratch_.data() + static_cast<std::size_t>(i) * kMaxDatagram, m.msg_len);
      auto d = proto::decode_write_record_data(datagram, assembler_.ring_bytes());
      if (!d) {
        if (d.error().message.find("CRC32C") != std::string::npos) ++receive_.dropped_checksum;
        else if (d.error().message.find("arrived") != std::string::npos) ++receive_.dropped_truncated;
        else ++receive_.dropped_garbage;
        continue;
      }
      assembler_.place(*d, now);
    }
    if (static_cast<std::size_t>(n) < kBatch) return;
  }
}

LiveChunk MulticastLiveSession::read(std::span<std::uint8_t> out, std::chrono::milliseconds timeout) {
  using Clock = MulticastAssembler::Clock;
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (interrupter_.raised()) throw Interrupted();
    drain_socket();
    const auto now = Clock::now();
    const AssembledChunk a = assembler_.read(out, now);
    if (a.bytes || a.end_of_stream || a.finished) {
      LiveChunk c;
      c.bytes = a.bytes;
      c.stream_offset = a.stream_offset;
      c.discontinuity = a.discontinuity;
      c.end_of_stream = a.end_of_stream;
      c.finished = a.finished;
      return c;
    }
    if (now >= deadline) return {};
    auto until = deadline;
    if (const auto next = assembler_.next_deadline()) until = std::min(until, std::max(*next, now));
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count();
    pollfd fds[2] = {{fd_, POLLIN, 0}, {interrupter_.fd(), POLLIN, 0}};
    if (poll(fds, 2, static_cast<int>(std::clamp<long long>(ms + (until > now ? 1 : 0), 0, 60'000))) < 0 && errno != EINTR)
      throw ClientError(ErrorKind::connection_lost, std::string("poll: ") + std::strerror(errno));
  }
}

std::string MulticastLiveSession::summary() const {
  return "multicast " + group_text_ + ": " + assembler_.stats().summary() + "; not taken: " + std::to_string(receive_.dropped_source) +
         " from another source, " + std::to_string(receive_.dropped_checksum) + " bad checksum, " +
         std::to_string(receive_.dropped_truncated) + " truncated, " + std::to_string(receive_.dropped_garbage) + " garbage";
}

}  // namespace vod::client
