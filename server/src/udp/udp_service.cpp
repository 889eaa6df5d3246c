// SPDX-License-Identifier: LGPL-2.1-or-later
// Longer than 400 lines because: receiving (hellos, cookies, requests and their admission), the
// per-address tables and the paced deficit-round-robin sender (pump) all work on UdpService's private
// state (clients_, ready_, sleepers_, the buckets, the scratch buffers); its split is deferred until
// the hardening of issue 29 has settled (issue 30 plan, Deferred).
#include "udp/udp_service.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "vod/log.hpp"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103  // linux/udp.h: GSO segment size (Linux 4.18+)
#endif

namespace vod::server::udp {

namespace {

constexpr std::size_t kBatch = 64;         // datagrams per recvmmsg, GSO trains per sendmmsg
constexpr std::size_t kRecvSlot = 2048;    // larger datagrams are not requests: truncated, dropped
constexpr std::size_t kHeader = sizeof(proto::WireWriteRecordDataHeader);
constexpr double kQuantum = 2.0 * kGsoBytes;  // bytes an address may send per turn: two full GSO trains
constexpr auto kMinTimer = std::chrono::microseconds(50);  // the soonest the timer is set for
constexpr auto kSweepGrid = std::chrono::milliseconds(250);  // idle addresses are swept on this grid
constexpr std::size_t kPktinfoSpace = CMSG_SPACE(sizeof(in6_pktinfo));  // the larger of the two families'

// The local address a datagram came to, from its IP_PKTINFO or IPV6_PKTINFO control message
// (family 0 when it carries neither).
void read_local(const msghdr& m, int& family, in6_addr& local, unsigned& ifindex) {
  family = 0;
  for (const cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(const_cast<msghdr*>(&m), const_cast<cmsghdr*>(c))) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
      in_pktinfo pi;
      std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
      family = AF_INET;
      local = {};
      std::memcpy(&local, &pi.ipi_addr, sizeof pi.ipi_addr);
      ifindex = static_cast<unsigned>(pi.ipi_ifindex);
    } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
      in6_pktinfo pi;
      std::memcpy(&pi, CMSG_DATA(c), sizeof pi);
      family = AF_INET6;
      local = pi.ipi6_addr;
      ifindex = pi.ipi6_ifindex;
    }
  }
}

// Appends to `m`'s control buffer (`used` bytes of it taken so far) the message that makes a send
// leave from `local`; nothing when the local address is unknown.
void add_source(msghdr& m, std::size_t& used, int family, const in6_addr& local, unsigned ifindex) {
  if (family != AF_INET && family != AF_INET6) return;
  auto* c = reinterpret_cast<cmsghdr*>(static_cast<char*>(m.msg_control) + used);
  if (family == AF_INET) {
    in_pktinfo pi{};
    std::memcpy(&pi.ipi_spec_dst, &local, sizeof pi.ipi_spec_dst);  // the source; the route picks the interface
    c->cmsg_level = IPPROTO_IP;
    c->cmsg_type = IP_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof pi);
    std::memcpy(CMSG_DATA(c), &pi, sizeof pi);
    used += CMSG_SPACE(sizeof pi);
  } else {
    in6_pktinfo pi{};
    pi.ipi6_addr = local;
    pi.ipi6_ifindex = IN6_IS_ADDR_LINKLOCAL(&local) ? ifindex : 0;
    c->cmsg_level = IPPROTO_IPV6;
    c->cmsg_type = IPV6_PKTINFO;
    c->cmsg_len = CMSG_LEN(sizeof pi);
    std::memcpy(CMSG_DATA(c), &pi, sizeof pi);
    used += CMSG_SPACE(sizeof pi);
  }
  m.msg_controllen = used;
}

}  // namespace

std::optional<std::string> max_payload_problem(std::uint32_t max_payload) {
  if (max_payload >= defaults::kUdpPayloadMin && max_payload <= defaults::kUdpPayloadMax) return std::nullopt;
  return "--udp-max-payload " + std::to_string(max_payload) + ": must be " + std::to_string(defaults::kUdpPayloadMin) + ".." +
         std::to_string(defaults::kUdpPayloadMax) + " bytes of payload (" + std::to_string(defaults::kUdpPayloadMax) +
         ": the largest UDP datagram over IPv4, 65507 bytes, less the " + std::to_string(kHeader) + "-byte Write-Record header)";
}

namespace {

UdpOptions validated(const UdpOptions& o) {
  if (auto why = max_payload_problem(o.max_payload)) throw std::invalid_argument(*why);
  if (!(o.max_rate_bps > 0) || !(o.client_rate_bps > 0)) throw std::invalid_argument("--udp-max-rate and --udp-client-rate must be positive");
  if (!(o.min_rate_bps > 0) || o.min_rate_bps > o.client_rate_bps)
    throw std::invalid_argument("the UDP rate floor (" + rate_text(o.min_rate_bps) + ") must be positive and at most --udp-client-rate (" +
                                rate_text(o.client_rate_bps) + "), or no request could be served");
  if (!o.max_jobs_per_client || !o.max_sessions_per_client || !o.max_clients || !o.max_jobs || !o.pre_cookie_slots)
    throw std::invalid_argument("UDP table sizes (jobs, sessions, clients, pre-cookie slots) must be at least 1");
  if (o.job_life.max_life <= std::chrono::milliseconds(0) || o.idle_client < std::chrono::milliseconds(0))
    throw std::invalid_argument("UDP job lifetime must be positive and the idle time at least 0");
  return o;
}

// A bucket's burst: 10 ms at its rate, at least 64 kB, and never less than two of the largest
// datagrams (a burst smaller than one datagram would never let it go).
double burst_for(double bytes_per_second, std::uint32_t max_payload) {
  return std::max({64e3, bytes_per_second / 100, 2.0 * static_cast<double>(max_payload + kHeader)});
}

std::uint16_t port_of(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return 0;
}

std::string describe(const sockaddr_storage& a) {
  char host[INET6_ADDRSTRLEN] = "?";
  unsigned port = 0;
  if (a.ss_family == AF_INET) {
    const auto& v4 = reinterpret_cast<const sockaddr_in&>(a);
    inet_ntop(AF_INET, &v4.sin_addr, host, sizeof host);
    port = ntohs(v4.sin_port);
  } else if (a.ss_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6&>(a);
    inet_ntop(AF_INET6, &v6.sin6_addr, host, sizeof host);
    port = ntohs(v6.sin6_port);
  }
  return std::string(host) + ":" + std::to_string(port);
}

}  // namespace

UdpOptions::TestDrop parse_test_drop(const std::string& text) {
  UdpOptions::TestDrop d;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const std::size_t colon = item.find(':');
    char* end = nullptr;
    const unsigned long n = colon == std::string::npos ? 0 : std::strtoul(item.c_str() + colon + 1, &end, 10);
    if (colon == std::string::npos || n == 0 || *end) throw std::invalid_argument("--udp-test-drop: '" + item + "' is not KIND:N with N > 0");
    const std::string kind = item.substr(0, colon);
    if (kind == "last") d.last_of_record = static_cast<unsigned>(n);
    else if (kind == "record") d.whole_record = static_cast<unsigned>(n);
    else if (kind == "datagram") d.datagram = static_cast<unsigned>(n);
    else throw std::invalid_argument("--udp-test-drop: unknown kind '" + kind + "' (last, record, datagram)");
    at = comma + 1;
  }
  return d;
}

bool UdpService::test_dropped(const Job& j, bool last) noexcept {
  const auto& t = options_.test_drop;
  if (j.repair) return false;
  const std::uint64_t datagram = ++datagrams_built_;
  const bool drop = (t.whole_record && j.ordinal % t.whole_record == t.whole_record - 1) ||
                    (t.last_of_record && last && j.ordinal % t.last_of_record == t.last_of_record - 1) ||
                    (t.datagram && datagram % t.datagram == 0);
  stats_.test_dropped += drop;
  return drop;
}

// The buffers of a receive batch and of a send batch: allocated once, with the service, so neither
// path allocates per datagram or per call.
struct UdpService::Scratch {
  std::uint8_t in[kBatch][kRecvSlot];
  mmsghdr in_msgs[kBatch];
  iovec in_iov[kBatch];
  sockaddr_storage from[kBatch];
  alignas(cmsghdr) char in_control[kBatch][kPktinfoSpace];
  struct Train {  // one sendmsg: consecutive datagrams of one record, a GSO train when more than one
    proto::WireWriteRecordDataHeader headers[kGsoSegments];
    iovec iov[2 * kGsoSegments];
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(std::uint16_t)) + kPktinfoSpace];
    Endpoint to;
    std::size_t segments = 0, bytes = 0;
    bool zero_copy = false;  // sent with MSG_ZEROCOPY: its headers are ZeroCopySends', not these
  } trains[kBatch];
  mmsghdr out_msgs[kBatch];
  // The owners of jobs that finished in the batch being built: their bytes stay alive until the
  // sendmmsg that sends them has returned.
  std::vector<std::shared_ptr<const void>> keep;
};

UdpService::UdpService(const UdpOptions& o, cache::SegmentCache* cache)
    : options_(validated(o)), cache_(cache), self_(std::make_shared<UdpService*>(this)), pre_cookie_(o.pre_cookie_slots, random_hash_key(), o.pre_cookie, Clock::now()),
      clients_(64, AddressHasher{random_hash_key()}), ready_(kQuantum),
      total_(o.max_rate_bps / 8, std::max(256e3, burst_for(o.max_rate_bps / 8, o.max_payload)), Clock::now()), hellos_total_(20000, 20000, Clock::now()),
      scratch_(std::make_unique<Scratch>()) {
  scratch_->keep.reserve(kBatch);
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(o.port);
  if (int err = getaddrinfo(o.bind == "0.0.0.0" || o.bind.empty() ? nullptr : o.bind.c_str(), port.c_str(), &hints, &res))
    throw std::runtime_error("--udp-port: cannot resolve " + o.bind + ": " + gai_strerror(err));
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
  if (bind(fd, info->ai_addr, info->ai_addrlen) != 0)
    throw std::runtime_error("--udp-port " + port + ": cannot bind " + o.bind + ": " + std::strerror(errno));
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(bound).sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in&>(bound).sin_port);
  // UDP GSO where the kernel has it: probe by setting a socket-wide segment size, then clear it
  // (each send sets its own).
  int segment = 1400;
  gso_ = setsockopt(fd, SOL_UDP, UDP_SEGMENT, &segment, sizeof segment) == 0;
  segment = 0;
  if (gso_) setsockopt(fd, SOL_UDP, UDP_SEGMENT, &segment, sizeof segment);
  if (o.zero_copy) {
    if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &on, sizeof on) == 0)
      zero_copy_ = std::make_unique<ZeroCopySends>(std::max<std::size_t>(o.zero_copy_max_pinned, 1));
    else
      log::warn("udp", std::string("--udp-zero-copy: the kernel refused SO_ZEROCOPY (") + std::strerror(errno) + "); sends are copied");
  }
  timer_.reset(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK));
  if (!timer_) throw std::runtime_error(std::string("timerfd_create: ") + std::strerror(errno));
  log::info("udp", "Write-Record on " + o.bind + ":" + std::to_string(port_) + ", at most " + rate_text(o.max_rate_bps) + " in all and " +
                       rate_text(o.client_rate_bps) + " per client address (IPv6: /64), requests for less than " + rate_text(o.min_rate_bps) +
                       " refused" + (gso_ ? ", UDP GSO" : ", no UDP GSO in this kernel") +
                       (zero_copy_ ? ", MSG_ZEROCOPY sends of loaded movies" : ""));
}

UdpService::~UdpService() {
  if (!zero_copy_) return;
  // The kernel may still read pinned headers: wait a little for their notifications first.
  zero_copy_->drain(fd_.get(), 200);
  const ZeroCopyStats& z = zero_copy_->stats();
  log::info("udp", "MSG_ZEROCOPY: " + std::to_string(z.sends) + " sends of " + std::to_string(z.bytes) + " bytes, " + std::to_string(z.completed) + " completed (" +
                       std::to_string(z.copied) + " copied by the kernel), at most " + std::to_string(z.pinned_max) + " pinned at once");
}

void UdpService::reap_zero_copy() {
  if (!zero_copy_) return;
  zero_copy_->reap(fd_.get());
  if (!zero_copy_told_ && zero_copy_->stats().copied > 0) {
    zero_copy_told_ = true;
    log::info("udp", "--udp-zero-copy: the kernel copied a zero-copy send (loopback and veth always do, as does a NIC without "
                     "scatter-gather): no gain on this path");
  }
}

double UdpService::wire_bytes(std::uint32_t payload) const noexcept { return static_cast<double>(payload + kHeader); }

std::uint64_t UdpService::now_seconds(Clock::time_point now) const {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(now - started_).count()) + 1'000'000;
}

UdpService::Client* UdpService::client_for(const AddressKey& key, Clock::time_point now) {
  if (auto it = clients_.find(key); it != clients_.end()) return &it->second;
  if (clients_.size() >= options_.max_clients) {
    if (idle_.empty()) {
      if (!table_full_)
        log::warn("udp", "the client table is full (" + std::to_string(clients_.size()) + " addresses with ranges queued): new addresses, " +
                             to_string(key) + " first, are refused until one is done");
      table_full_ = true;
      return nullptr;
    }
    forget(clients_.find(idle_.front())->second);  // the one idle longest
  } else {
    table_full_ = false;
  }
  const double rate = options_.client_rate_bps / 8;
  auto [it, inserted] = clients_.try_emplace(key);
  Client& c = it->second;
  c.key = key;
  c.bucket = TokenBucket(rate, burst_for(rate, options_.max_payload), now);
  set_idle(c, now);
  return &c;
}

UdpService::Session* UdpService::session_for(Client& c, std::uint32_t id, std::uint16_t port, std::uint32_t epoch, Clock::time_point now) {
  for (Session& s : c.sessions)
    if (s.id == id && s.port == port) return &s;
  if (c.sessions.size() >= options_.max_sessions_per_client) {
    // Room for a new session: forget the one that has waited longest with nothing queued (its
    // epoch with it: a request of its that comes later starts it again).
    auto victim = c.sessions.end();
    for (auto it = c.sessions.begin(); it != c.sessions.end(); ++it)
      if (it->jobs.empty() && (victim == c.sessions.end() || it->last < victim->last)) victim = it;
    if (victim == c.sessions.end()) return nullptr;
    c.sessions.erase(victim);
    --sessions_;
    c.next_session = 0;
  }
  const double rate = options_.client_rate_bps / 8;
  c.sessions.push_back(Session{id, port, epoch, TokenBucket(rate, burst_for(rate, options_.max_payload), now), {}, now});
  ++sessions_;
  return &c.sessions.back();
}

void UdpService::enqueue(Client& c) {
  if (c.idle) {
    idle_.erase(c.idle_at);
    c.idle = false;
  }
  if (!c.queued) {
    ready_.push(&c);
    c.queued = true;
    c.wake = Clock::time_point::max();  // an entry it may have in sleepers_ is stale now
  }
}

void UdpService::set_idle(Client& c, Clock::time_point now) {
  c.wake = Clock::time_point::max();
  c.earliest_deadline = Clock::time_point::max();
  if (c.idle) return;
  c.idle_at = idle_.insert(idle_.end(), c.key);
  c.idle = true;
  c.idle_since = now;
}

void UdpService::forget(Client& c) {
  // Only an idle address (no jobs, not in the ring) is forgotten; entries of it in sleepers_ are
  // stale and found so by key.
  if (c.idle) idle_.erase(c.idle_at);
  sessions_ -= c.sessions.size();
  ++stats_.clients_forgotten;
  clients_.erase(c.key);
}

void UdpService::sweep_idle(Clock::time_point now) {
  while (!idle_.empty()) {
    Client& c = clients_.find(idle_.front())->second;
    if (now - c.idle_since < options_.idle_client) break;
    forget(c);
  }
}

void UdpService::on_readable() {
  reap_zero_copy();  // the error queue makes the socket ready too
  Scratch& x = *scratch_;
  for (int round = 0; round < 16; ++round) {  // bounded: other fds get their turn
    for (std::size_t i = 0; i < kBatch; ++i) {
      x.in_iov[i] = {x.in[i], kRecvSlot};
      x.in_msgs[i] = {};
      x.in_msgs[i].msg_hdr.msg_iov = &x.in_iov[i];
      x.in_msgs[i].msg_hdr.msg_iovlen = 1;
      x.in_msgs[i].msg_hdr.msg_name = &x.from[i];
      x.in_msgs[i].msg_hdr.msg_namelen = sizeof x.from[i];
      x.in_msgs[i].msg_hdr.msg_control = x.in_control[i];
      x.in_msgs[i].msg_hdr.msg_controllen = sizeof x.in_control[i];
    }
    const int n = recvmmsg(fd_.get(), x.in_msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) break;
    const auto now = Clock::now();
    for (int i = 0; i < n; ++i) {
      if (x.in_msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
        ++stats_.dropped;  // larger than any request
        continue;
      }
      Endpoint from;
      from.addr = x.from[i];
      from.len = std::min<socklen_t>(x.in_msgs[i].msg_hdr.msg_namelen, sizeof from.addr);
      read_local(x.in_msgs[i].msg_hdr, from.local_family, from.local, from.local_ifindex);
      handle(x.in[i], x.in_msgs[i].msg_len, from, now);
    }
    if (static_cast<std::size_t>(n) < kBatch) break;
  }
  pump(Clock::now());
}

void UdpService::handle(const std::uint8_t* data, std::size_t n, const Endpoint& from, Clock::time_point now) {
  const proto::Bytes b(data, n);
  if (n < sizeof(proto::WireHeader)) {
    ++stats_.dropped;
    return;
  }
  const auto h = proto::load_wire<proto::WireHeader>(data);
  if (h.magic.get() != proto::kMagic) {
    ++stats_.dropped;  // not ours: no answer (an answer to garbage is a reflector)
    return;
  }
  // Nothing is allocated for the sender here: until its cookie verifies it has only its slot of
  // the pre-cookie table.
  const AddressKey key = address_key(from.addr);
  switch (static_cast<proto::MessageType>(h.type)) {
    case proto::MessageType::write_record_hello: return on_hello(b, from, key, now);
    case proto::MessageType::write_record_request: return on_request(b, from, key, now);
    default: ++stats_.dropped;
  }
}

void UdpService::on_hello(proto::Bytes b, const Endpoint& from, const AddressKey& key, Clock::time_point now) {
  auto hello = proto::decode_write_record_hello(b);
  if (!hello) {
    ++stats_.dropped;
    return;
  }
  ++stats_.hellos;
  // A flood of hellos (possibly with forged sources) gets cookies only as fast as the budgets allow.
  if (hellos_total_.available(now) < 1 || !pre_cookie_.take_hello(key, now)) {
    ++stats_.dropped;
    return;
  }
  hellos_total_.take(1);
  proto::WriteRecordCookie cookie{hello->nonce, cookies_.make(from.addr, now_seconds(now)), CookieJar::kWindowSeconds, options_.max_payload};
  send_small(from, proto::encode(cookie));  // 48 bytes in answer to 64
}

void UdpService::on_request(proto::Bytes b, const Endpoint& from, const AddressKey& key, Clock::time_point now) {
  auto r = proto::decode_write_record_request(b);
  if (!r) {
    // Echo what identifies the request (session, epoch, record), as far as it arrived.
    proto::WriteRecordError e{0, 0, 0, proto::reject_code_for(r.error()), r.error().message};
    struct Ids {
      proto::WireHeader header;
      proto::be32 session_id, epoch;
      proto::be64 record_seq;
    };
    if (b.size() >= sizeof(Ids)) {
      const auto ids = proto::load_wire<Ids>(b.data());
      e.session_id = ids.session_id.get();
      e.epoch = ids.epoch.get();
      e.record_seq = ids.record_seq.get();
    }
    return send_error(from, key, b.size(), std::move(e), now);
  }
  ++stats_.requests;
  auto refuse = [&](proto::RejectCode code, std::string reason) {
    send_error(from, key, b.size(), {r->session_id, r->epoch, r->record_seq, code, std::move(reason)}, now);
  };
  if (!cookies_.valid(r->cookie, from.addr, now_seconds(now))) {
    ++stats_.bad_cookies;
    return refuse(proto::RejectCode::bad_cookie, "no valid cookie: say hello again");
  }
  if (!regions_) return refuse(proto::RejectCode::shutting_down, "not serving yet");
  // The address proved it receives: from here it may have state, within bounds.
  Client* c = client_for(key, now);
  if (!c) {
    ++stats_.rate_limited;
    return refuse(proto::RejectCode::rate_limited, "server busy: too many clients; ask later");
  }
  Session* s = session_for(*c, r->session_id, port_of(from.addr), r->epoch, now);
  if (!s) {
    ++stats_.rate_limited;
    return refuse(proto::RejectCode::rate_limited, "too many sessions of your address at once");
  }
  s->last = now;
  // A newer epoch of a session supersedes what its older epochs still had queued (a seek).
  if (static_cast<std::int32_t>(r->epoch - s->epoch) < 0) {
    ++stats_.superseded;  // a request from before the client's last seek: nobody wants it any more
    return;
  }
  if (r->epoch != s->epoch) {
    s->epoch = r->epoch;
    const auto before = s->jobs.size();
    // A job half sent stays: its datagrams carry the old epoch and the client drops them; cutting
    // it here would only save what is already in flight.
    std::erase_if(s->jobs, [&](const Job& j) { return j.sent == 0; });
    if (s->jobs.empty()) std::vector<Job>().swap(s->jobs);
    const std::size_t dropped = before - s->jobs.size();
    c->jobs -= dropped;
    jobs_ -= dropped;
    stats_.superseded += dropped;
    if (c->jobs == 0 && !c->queued) set_idle(*c, now);
  }
  if (c->jobs >= options_.max_jobs_per_client || jobs_ >= options_.max_jobs) {
    ++stats_.rate_limited;
    return refuse(proto::RejectCode::rate_limited, "too many ranges queued; ask again when these arrived");
  }
  UdpDecision d = admit_udp(*r, regions_, {defaults::kUdpMaxRecord, options_.max_payload, static_cast<std::uint64_t>(options_.min_rate_bps)});
  if (auto* e = std::get_if<proto::WriteRecordError>(&d)) return send_error(from, key, b.size(), std::move(*e), now);
  const double rate = std::min<double>(static_cast<double>(r->rate_bps), options_.client_rate_bps) / 8;
  s->pace.set_rate(rate, burst_for(rate, options_.max_payload));
  // A session (an address) with nothing queued starts its record with a full burst, not in slices
  // paced by timer wake-ups.
  if (s->jobs.empty()) s->pace.fill();
  if (c->jobs == 0) c->bucket.fill();
  bool repair = false;
  if (options_.test_drop.any()) repair = !test_seen_.insert({r->session_id, r->record_seq}).second;
  Job j;
  j.epoch = r->epoch;
  j.record_seq = r->record_seq;
  j.buffer_offset = r->buffer_offset;
  j.data = std::get<UdpJob>(std::move(d));
  j.to = from;
  j.deadline = job_deadline(now, r->length, rate * 8, options_.job_life);
  j.ordinal = repair ? 0 : jobs_admitted_++;
  j.repair = repair;
  j.request_size = b.size();
  c->earliest_deadline = std::min(c->earliest_deadline, j.deadline);
  s->jobs.push_back(std::move(j));
  ++c->jobs;
  ++jobs_;
  enqueue(*c);
}

void UdpService::send_error(const Endpoint& to, const AddressKey& key, std::size_t request_size, proto::WriteRecordError e, Clock::time_point now) {
  // Never larger than what came: the reason is shortened to fit, and a datagram too small to hold
  // an error gets none.
  if (request_size < sizeof(proto::WireWriteRecordErrorFixed) || !pre_cookie_.take_error(key, now)) {
    ++stats_.dropped;
    return;
  }
  auto bytes = proto::encode(e);
  if (bytes.size() > request_size) {
    e.reason.resize(request_size - sizeof(proto::WireWriteRecordErrorFixed));
    bytes = proto::encode(e);
  }
  ++stats_.errors_sent;
  send_small(to, bytes);
}

void UdpService::send_small(const Endpoint& to, const std::vector<std::uint8_t>& bytes) {
  iovec iov{const_cast<std::uint8_t*>(bytes.data()), bytes.size()};  // sendmsg reads, never writes
  alignas(cmsghdr) char control[kPktinfoSpace];
  msghdr m{};
  m.msg_name = const_cast<sockaddr_storage*>(&to.addr);
  m.msg_namelen = to.len;
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = control;
  std::size_t used = 0;
  add_source(m, used, to.local_family, to.local, to.local_ifindex);
  if (used == 0) m.msg_control = nullptr;
  if (sendmsg(fd_.get(), &m, MSG_DONTWAIT) < 0) log::debug("udp", "sendmsg " + describe(to.addr) + ": " + std::strerror(errno));
}

void UdpService::on_timer() {
  std::uint64_t expirations = 0;
  (void)!::read(timer_.get(), &expirations, sizeof expirations);
  armed_ = Clock::time_point::max();  // a one-shot timer that fired is disarmed
  pump(Clock::now());
}

void UdpService::expire_jobs(Client& c, Clock::time_point now) {
  // Called only as the address's turn begins, with the pump's `now`: no job it drops has bytes in
  // a batch still being built.
  std::size_t dropped = 0;
  Clock::time_point earliest = Clock::time_point::max();
  for (Session& s : c.sessions) {
    const std::size_t before = s.jobs.size();
    std::erase_if(s.jobs, [&](const Job& j) { return j.deadline <= now; });
    dropped += before - s.jobs.size();
    for (const Job& j : s.jobs) earliest = std::min(earliest, j.deadline);
    if (s.jobs.empty()) std::vector<Job>().swap(s.jobs);  // a session's memory goes with its last job
  }
  c.earliest_deadline = earliest;
  if (!dropped) return;
  c.jobs -= dropped;
  jobs_ -= dropped;
  stats_.expired += dropped;
  log::debug("udp", to_string(c.key) + ": dropped " + std::to_string(dropped) + " range(s) not sent by their deadline (the client asks again)");
}

UdpService::Session* UdpService::sendable(Client& c, Clock::time_point now) {
  const std::size_t n = c.sessions.size();
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (c.next_session + k) % n;
    Session& s = c.sessions[i];
    if (s.jobs.empty() || s.pace.available(now) < wire_bytes(s.jobs.front().data.payload)) continue;
    Job& j = s.jobs.front();
    if (j.data.cached) {
      const Ready r = ready_bytes(c, j, now);
      if (r.failed) {  // the disk failed it: the client hears why, and the job goes
        send_error(j.to, c.key, j.request_size,
                   {s.id, j.epoch, j.record_seq, proto::RejectCode::internal_error, "the server could not read that range from its disk"}, now);
        s.jobs.erase(s.jobs.begin());
        --c.jobs;
        --jobs_;
        continue;
      }
      if (r.bytes.empty()) continue;  // its segment is being read in
    }
    c.next_session = i;
    return &s;
  }
  return nullptr;
}

UdpService::Ready UdpService::ready_bytes(const Client& c, Job& j, Clock::time_point now) {
  if (!j.data.cached) return {j.data.bytes.subspan(static_cast<std::size_t>(j.sent)), false};
  if (j.fault && !j.fault->done) return {};
  if (j.fault && j.fault->status != proto::SegmentStatus::ok) return {{}, true};
  const std::uint64_t at = j.data.offset + j.sent, segment_size = cache_->options().segment_size;
  const auto segment = static_cast<std::uint32_t>(at / segment_size);
  // Checked at every train, and sent in the same turn of the loop: a slot holding the segment now
  // is not refilled before the datagrams have left (sendmsg copies them).
  // The client's address asks (a UDP client's grace protects its fair share of the slots, as a
  // connection's does): the high bit keeps it apart from connections' ids.
  const cache::Requester who = (1ull << 63) | ((c.key.prefix ^ (std::uint64_t{c.key.family} << 56)) & ~(1ull << 63));
  const auto whole = cache_->resident_bytes(*j.data.cached, segment, now, who);
  if (!whole.empty()) {
    j.fault.reset();
    const std::uint64_t in = at - std::uint64_t{segment} * segment_size;
    return {whole.subspan(static_cast<std::size_t>(in), static_cast<std::size_t>(std::min<std::uint64_t>(whole.size() - in, j.data.length - j.sent))), false};
  }
  j.fault = std::make_shared<Job::Fault>();
  std::weak_ptr<Job::Fault> fault = j.fault;
  std::weak_ptr<UdpService*> self = self_;
  const AddressKey key = c.key;
  // The next segments too, as a viewer's read-ahead: a paced range finds them in.
  cache_->request(j.data.cached, segment, 2, [fault, self, key](proto::SegmentStatus status, const proto::SegmentEntry&) {
    if (auto f = fault.lock()) {
      f->done = true;
      f->status = status;
    }
    auto s = self.lock();
    if (!s || !*s) return;
    UdpService& u = **s;
    auto it = u.clients_.find(key);
    if (it == u.clients_.end() || it->second.jobs == 0) return;
    u.enqueue(it->second);
    u.arm_timer(Clock::now());  // the pump runs from the loop, not from inside the cache
  }, who);
  return {};
}

UdpService::Clock::time_point UdpService::wake_time(Client& c, Clock::time_point now) {
  // When its first session may send its next datagram, and its address bucket too; or the first
  // deadline, so that expired jobs leave even while it waits.
  // A whole GSO train's worth (or the rest of the record), not one datagram: waking per datagram
  // while a bucket paces an address cost five system calls per datagram (20 paced viewers from one
  // address: 5x the server CPU of the same viewers from 20 addresses).
  // The address bucket waits for the largest of its sessions' trains: whichever session's turn it
  // is then, its whole train fits (waiting for the smallest, a record's last datagram, woke it
  // every 160 us to send one or two datagrams of another session's record).
  Clock::time_point at = Clock::time_point::max();
  double largest = 0;
  const bool gso = gso_ && !options_.test_drop.any();
  for (Session& s : c.sessions) {
    if (s.jobs.empty()) continue;
    const Job& j = s.jobs.front();
    if (j.fault && !j.fault->done) continue;  // woken when its segment is in
    const double train = wire_bytes(j.data.payload) *
                         static_cast<double>(datagrams_per_send(j.data.payload, std::numeric_limits<double>::max(), j.data.size() - j.sent, gso));
    at = std::min(at, s.pace.when(train, now));
    largest = std::max(largest, train);
  }
  // And an address its own bucket holds back wakes when half that bucket (5 ms at its rate) is
  // there, so that one wake-up sends several sessions' trains: pacing in 5 ms steps instead of one
  // train (about 1 ms) at a time costs a quarter of the wake-ups.
  if (at != Clock::time_point::max()) at = std::max(at, c.bucket.when(std::max(largest, c.bucket.burst() / 2), now));
  return std::min(at, c.earliest_deadline);
}

void UdpService::wake_sleepers(Clock::time_point now) {
  while (!sleepers_.empty() && sleepers_.top().at <= now) {
    const Wake w = sleepers_.top();
    sleepers_.pop();
    auto it = clients_.find(w.key);
    if (it == clients_.end() || it->second.queued || it->second.wake != w.at) continue;  // stale
    enqueue(it->second);
  }
}

void UdpService::pump(Clock::time_point now) {
  // Addresses take turns by deficit round robin (ready_); within an address its sessions take
  // turns. Each send is one GSO train of one record, as long as every bucket allows (the session's,
  // the address's, the server's) and the address's turn lasts. An address whose buckets stop it
  // sleeps in sleepers_ until they allow; one with nothing left goes idle.
  wake_sleepers(now);
  sweep_idle(now);
  reap_zero_copy();
  Scratch& x = *scratch_;
  const bool gso = gso_ && !options_.test_drop.any();
  socket_full_ = false;
  server_wait_ = 0;
  for (;;) {
    std::size_t batch = 0;
    while (batch < kBatch && !ready_.empty()) {
      Client& c = *ready_.front();
      if (now >= c.earliest_deadline) expire_jobs(c, now);
      if (c.jobs == 0) {
        ready_.pop();
        c.queued = false;
        set_idle(c, now);
        continue;
      }
      Session* s = sendable(c, now);
      if (!s || c.bucket.available(now) < wire_bytes(s->jobs.front().data.payload)) {
        ready_.pop();  // paced: asleep until its buckets allow
        c.queued = false;
        c.wake = wake_time(c, now);
        sleepers_.push({c.wake, c.key});
        continue;
      }
      Job& j = s->jobs.front();
      const double wire = wire_bytes(j.data.payload);
      const double allowance = ready_.allowance();
      if (allowance < wire) {
        ready_.rotate();  // its turn is over
        continue;
      }
      const double total = total_.available(now);
      if (total < wire) {
        server_wait_ = wire;  // the server's rate: the turn goes on when total_ allows
        break;
      }
      const std::uint64_t size = j.data.size();
      // What can go now: the rest of the range, or of the cached segment it is in (sendable()
      // found it resident): a train never crosses a segment's end, where a datagram may be short.
      const std::span<const std::uint8_t> ready = ready_bytes(c, j, now).bytes;
      std::size_t count =
          datagrams_per_send(j.data.payload, std::min({allowance, total, c.bucket.available(now), s->pace.available(now)}), ready.size(), gso);
      // Zero copy only from a loaded movie's bytes, never reused in place (zero_copy_sends.hpp), and
      // no more datagrams in one send than the kernel's fragments can point at.
      bool zero_copy = zero_copy_ && !j.data.cached && zero_copy_->room() && !options_.test_drop.any();
      if (zero_copy) {
        const std::size_t fit = ZeroCopySends::segments_that_fit(ready, j.data.payload, count);
        if (fit > 0) count = fit;
        else zero_copy = false;
      }
      Scratch::Train& t = x.trains[batch];
      t.segments = count;
      t.to = j.to;
      std::uint64_t at = j.sent;
      for (std::size_t k = 0; k < count; ++k) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(j.data.payload, j.sent + ready.size() - at));
        proto::WriteRecordData d;
        d.session_id = s->id;
        d.epoch = j.epoch;
        d.record_seq = j.record_seq;
        d.record_length = size;
        d.record_offset = at;
        d.buffer_offset = j.buffer_offset;
        d.flags = at + n == size ? proto::kRecordLastDatagram : 0;
        d.payload = ready.subspan(static_cast<std::size_t>(at - j.sent), n);
        t.headers[k] = proto::data_header(d);
        t.iov[2 * k] = {&t.headers[k], kHeader};
        t.iov[2 * k + 1] = {const_cast<std::uint8_t*>(d.payload.data()), n};  // sendmsg reads, never writes
        at += n;
      }
      t.bytes = static_cast<std::size_t>(at - j.sent) + count * kHeader;
      t.zero_copy = zero_copy;
      if (t.zero_copy) {
        const ZeroCopySends::Header* pinned = zero_copy_->stage({t.headers, count}, t.bytes, j.data.owner);
        for (std::size_t k = 0; k < count; ++k) t.iov[2 * k].iov_base = const_cast<ZeroCopySends::Header*>(&pinned[k]);
      }
      const double bytes = static_cast<double>(t.bytes);
      c.bucket.take(bytes);
      s->pace.take(bytes);
      total_.take(bytes);
      ready_.spend(bytes);
      j.sent = at;
      c.next_session = (static_cast<std::size_t>(s - c.sessions.data()) + 1) % c.sessions.size();
      const bool finished = at == size;
      const bool lost = options_.test_drop.any() && test_dropped(j, finished);  // "lost": paced, never sent
      if (!lost) ++batch;
      if (finished) {
        if (!lost) x.keep.push_back(std::move(j.data.owner));  // its bytes are in this batch
        s->jobs.erase(s->jobs.begin());
        if (s->jobs.empty()) std::vector<Job>().swap(s->jobs);
        --c.jobs;
        --jobs_;
      }
    }
    if (batch == 0) break;
    // The zero-copy trains first (one sendmmsg with MSG_ZEROCOPY, in the order they were staged),
    // then the others.
    std::size_t order[kBatch];
    std::size_t zero_copied = 0;
    for (std::size_t i = 0; i < batch; ++i)
      if (x.trains[i].zero_copy) order[zero_copied++] = i;
    for (std::size_t i = 0, n = zero_copied; i < batch; ++i)
      if (!x.trains[i].zero_copy) order[n++] = i;
    for (std::size_t o = 0; o < batch; ++o) {
      Scratch::Train& t = x.trains[order[o]];
      msghdr& m = x.out_msgs[o].msg_hdr;
      m = {};
      m.msg_name = &t.to.addr;
      m.msg_namelen = t.to.len;
      m.msg_iov = t.iov;
      m.msg_iovlen = 2 * t.segments;
      m.msg_control = t.control;
      std::size_t used = 0;
      if (gso && t.segments > 1) {
        cmsghdr* cm = reinterpret_cast<cmsghdr*>(t.control);
        cm->cmsg_level = SOL_UDP;
        cm->cmsg_type = UDP_SEGMENT;
        cm->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
        const auto segment = static_cast<std::uint16_t>(t.iov[0].iov_len + t.iov[1].iov_len);  // every segment but the last
        std::memcpy(CMSG_DATA(cm), &segment, sizeof segment);
        used = CMSG_SPACE(sizeof(std::uint16_t));
        m.msg_controllen = used;
      }
      add_source(m, used, t.to.local_family, t.to.local, t.to.local_ifindex);
      if (used == 0) m.msg_control = nullptr;
      stats_.datagrams += t.segments;
    }
    const auto send = [&](std::size_t from, std::size_t n, int flags) -> std::size_t {
      if (n == 0) return 0;
      const int sent = sendmmsg(fd_.get(), x.out_msgs + from, static_cast<unsigned>(n), MSG_DONTWAIT | flags);
      if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != ENOBUFS) log::warn("udp", std::string("sendmmsg: ") + std::strerror(errno));
      const std::size_t ok = sent > 0 ? static_cast<std::size_t>(sent) : 0;
      stats_.sends += ok;
      for (std::size_t o = from; o < from + ok; ++o) stats_.bytes += x.trains[order[o]].bytes;
      return ok;
    };
    // A zero-copy send can also fail for want of option memory (ENOBUFS): as a full socket.
    const std::size_t zero_sent = send(0, zero_copied, MSG_ZEROCOPY);
    if (zero_copy_) zero_copy_->sent(zero_sent);
    const std::size_t plain_sent = zero_sent == zero_copied ? send(zero_copied, batch - zero_copied, 0) : 0;
    const int sent = static_cast<int>(zero_sent + plain_sent);
    // What the socket did not take is lost as if the network dropped it: the client asks again.
    x.keep.clear();
    if (sent != static_cast<int>(batch)) {
      socket_full_ = true;
      break;
    }
    if (server_wait_ > 0) break;
  }
  arm_timer(now);
}

void UdpService::arm_timer(Clock::time_point now) {
  // Wake for the first of: the server's bucket, when an address's turn waits for it (or soon, when
  // the socket was full); the first sleeping address; the first idle address to forget (on a coarse
  // grid, so that most pumps leave the timer as it is).
  Clock::time_point next = Clock::time_point::max();
  if (!ready_.empty()) next = socket_full_ || server_wait_ <= 0 ? now : total_.when(server_wait_, now);
  if (!sleepers_.empty()) next = std::min(next, sleepers_.top().at);
  if (!idle_.empty()) {
    const auto forget_at = clients_.find(idle_.front())->second.idle_since + std::chrono::duration_cast<Clock::duration>(options_.idle_client);
    const auto grid = std::chrono::duration_cast<Clock::duration>(kSweepGrid);
    next = std::min(next, Clock::time_point((forget_at.time_since_epoch() / grid + 1) * grid));
  }
  if (next != Clock::time_point::max()) next = std::max(next, now + std::chrono::duration_cast<Clock::duration>(kMinTimer));
  if (next == armed_) return;  // one system call fewer per request, most of the time
  armed_ = next;
  itimerspec spec{};
  if (next != Clock::time_point::max()) {
    // Absolute, on CLOCK_MONOTONIC: the clock steady_clock reads on Linux.
    const auto at = std::chrono::duration_cast<std::chrono::nanoseconds>(next.time_since_epoch()).count();
    spec.it_value.tv_sec = static_cast<time_t>(at / 1'000'000'000);
    spec.it_value.tv_nsec = static_cast<long>(at % 1'000'000'000);
  }
  timerfd_settime(timer_.get(), TFD_TIMER_ABSTIME, &spec, nullptr);
}

}  // namespace vod::server::udp
