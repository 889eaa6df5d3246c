// SPDX-License-Identifier: LGPL-2.1-or-later
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
#include <stdexcept>

#include "vod/log.hpp"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103  // linux/udp.h: GSO segment size (Linux 4.18+)
#endif

namespace vod::server::udp {

namespace {

constexpr std::size_t kBatch = 64;            // datagrams per recvmmsg, mmsghdrs per sendmmsg
constexpr std::size_t kSendsPerClient = 8;     // GSO sends per client per round (8 × 64 KB)
constexpr std::size_t kGsoSegments = 64;      // datagrams per GSO send (the kernel's UDP_MAX_SEGMENTS)
constexpr std::size_t kGsoBytes = 65000;      // and bytes: one GSO send is one IP packet's worth before segmentation
constexpr std::size_t kRecvSlot = 2048;       // larger datagrams are not requests: truncated, dropped
constexpr auto kIdleClient = std::chrono::seconds(5);

std::string key_of(const sockaddr_storage& a, socklen_t len) { return {reinterpret_cast<const char*>(&a), len}; }

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

UdpService::UdpService(const UdpOptions& o)
    : options_(o), total_(o.max_rate_bps / 8, std::max(256e3, o.max_rate_bps / 8 / 100), Clock::now()),
      hellos_total_(20000, 20000, Clock::now()) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(o.port);
  if (int err = getaddrinfo(o.bind == "0.0.0.0" || o.bind.empty() ? nullptr : o.bind.c_str(), port.c_str(), &hints, &res))
    throw std::runtime_error("--udp-port: cannot resolve " + o.bind + ": " + gai_strerror(err));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> info(res, freeaddrinfo);
  fd_ = socket(info->ai_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd_ < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  const int buf = 8 << 20, pmtu = IP_PMTUDISC_DO;
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof buf) != 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &buf, sizeof buf);
  if (setsockopt(fd_, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof buf) != 0) setsockopt(fd_, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  // Never fragment: a datagram larger than the path MTU fails to send rather than leaving in pieces.
  if (info->ai_family == AF_INET) setsockopt(fd_, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof pmtu);
  if (bind(fd_, info->ai_addr, info->ai_addrlen) != 0) {
    const int err = errno;
    close(fd_);
    throw std::runtime_error("--udp-port " + port + ": cannot bind " + o.bind + ": " + std::strerror(err));
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof bound;
  getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &bound_len);
  port_ = bound.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6&>(bound).sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in&>(bound).sin_port);
  // UDP GSO where the kernel has it: probe by setting a socket-wide segment size, then clear it
  // (each send sets its own).
  int segment = 1400;
  gso_ = setsockopt(fd_, SOL_UDP, UDP_SEGMENT, &segment, sizeof segment) == 0;
  segment = 0;
  if (gso_) setsockopt(fd_, SOL_UDP, UDP_SEGMENT, &segment, sizeof segment);
  timer_ = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (timer_ < 0) throw std::runtime_error(std::string("timerfd_create: ") + std::strerror(errno));
  log::info("udp", "Write-Record on " + o.bind + ":" + std::to_string(port_) + ", at most " + std::to_string(static_cast<long>(o.max_rate_bps / 1e6)) +
                       " Mbit/s in all and " + std::to_string(static_cast<long>(o.client_rate_bps / 1e6)) + " per client" +
                       (gso_ ? ", UDP GSO" : ", no UDP GSO in this kernel"));
}

UdpService::~UdpService() {
  if (timer_ >= 0) close(timer_);
  if (fd_ >= 0) close(fd_);
}

std::uint64_t UdpService::now_seconds(Clock::time_point now) const {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(now - started_).count()) + 1'000'000;
}

UdpService::Client& UdpService::client_for(const sockaddr_storage& addr, socklen_t len, Clock::time_point now) {
  const std::string key = key_of(addr, len);
  auto it = clients_.find(key);
  if (it == clients_.end()) {
    // 20 error datagrams and 10 cookies a second to one address, whatever it sends.
    Client c{addr, len, TokenBucket(options_.client_rate_bps / 8, 64e3, now), TokenBucket(20, 20, now), TokenBucket(10, 10, now), {}, {}};
    it = clients_.emplace(key, std::move(c)).first;
  }
  return it->second;
}

void UdpService::on_readable() {
  std::vector<std::uint8_t> buffers(kBatch * kRecvSlot);
  mmsghdr msgs[kBatch];
  iovec iovs[kBatch];
  sockaddr_storage from[kBatch];
  for (int round = 0; round < 16; ++round) {  // bounded: other fds get their turn
    for (std::size_t i = 0; i < kBatch; ++i) {
      iovs[i] = {buffers.data() + i * kRecvSlot, kRecvSlot};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iovs[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_name = &from[i];
      msgs[i].msg_hdr.msg_namelen = sizeof from[i];
    }
    const int n = recvmmsg(fd_, msgs, kBatch, MSG_DONTWAIT, nullptr);
    if (n <= 0) break;
    const auto now = Clock::now();
    for (int i = 0; i < n; ++i) {
      if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
        ++stats_.dropped;  // larger than any request
        continue;
      }
      handle(buffers.data() + static_cast<std::size_t>(i) * kRecvSlot, msgs[i].msg_len, from[i], msgs[i].msg_hdr.msg_namelen, now);
    }
    if (static_cast<std::size_t>(n) < kBatch) break;
  }
  pump(Clock::now());
}

void UdpService::handle(const std::uint8_t* data, std::size_t n, const sockaddr_storage& from, socklen_t from_len, Clock::time_point now) {
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
  Client& c = client_for(from, from_len, now);
  switch (static_cast<proto::MessageType>(h.type)) {
    case proto::MessageType::write_record_hello: return on_hello(b, c, now);
    case proto::MessageType::write_record_request: return on_request(b, c, now);
    default: ++stats_.dropped;
  }
}

void UdpService::on_hello(proto::Bytes b, Client& c, Clock::time_point now) {
  auto hello = proto::decode_write_record_hello(b);
  if (!hello) {
    ++stats_.dropped;
    return;
  }
  ++stats_.hellos;
  // A flood of hellos (possibly with forged sources) gets cookies only as fast as the budgets allow.
  if (c.hello_budget.available(now) < 1 || hellos_total_.available(now) < 1) {
    ++stats_.dropped;
    return;
  }
  c.hello_budget.take(1);
  hellos_total_.take(1);
  proto::WriteRecordCookie cookie{hello->nonce, cookies_.make(c.addr, now_seconds(now)), CookieJar::kWindowSeconds, options_.max_payload};
  send_small(c, proto::encode(cookie));  // 48 bytes in answer to 64
}

void UdpService::on_request(proto::Bytes b, Client& c, Clock::time_point now) {
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
    return send_error(c, b.size(), std::move(e), now);
  }
  ++stats_.requests;
  if (!cookies_.valid(r->cookie, c.addr, now_seconds(now))) {
    ++stats_.bad_cookies;
    return send_error(c, b.size(), {r->session_id, r->epoch, r->record_seq, proto::RejectCode::bad_cookie, "no valid cookie: say hello again"}, now);
  }
  // A newer epoch of a session supersedes what its older epochs still had queued (a seek).
  auto [epoch, inserted] = c.epochs.emplace(r->session_id, r->epoch);
  if (!inserted && static_cast<std::int32_t>(r->epoch - epoch->second) < 0) {
    ++stats_.superseded;  // a request from before the client's last seek: nobody wants it any more
    return;
  }
  if (r->epoch != epoch->second) {
    epoch->second = r->epoch;
    const auto before = c.jobs.size();
    std::erase_if(c.jobs, [&](const Job& j) { return j.request.session_id == r->session_id && j.request.epoch != r->epoch && j.sent == 0; });
    // A job half sent stays: its datagrams carry the old epoch and the client drops them; cutting
    // it here would only save what is already in flight.
    jobs_ -= before - c.jobs.size();
    stats_.superseded += before - c.jobs.size();
  }
  if (!regions_) return send_error(c, b.size(), {r->session_id, r->epoch, r->record_seq, proto::RejectCode::shutting_down, "not serving yet"}, now);
  if (c.jobs.size() >= options_.max_jobs_per_client || jobs_ >= options_.max_jobs) {
    ++stats_.rate_limited;
    return send_error(c, b.size(), {r->session_id, r->epoch, r->record_seq, proto::RejectCode::rate_limited,
                                    "too many ranges queued; ask again when these arrived"}, now);
  }
  UdpDecision d = admit_udp(*r, *regions_, {16u << 20, options_.max_payload});
  if (auto* e = std::get_if<proto::WriteRecordError>(&d)) return send_error(c, b.size(), std::move(*e), now);
  const double rate = std::min<double>(static_cast<double>(r->rate_bps), options_.client_rate_bps) / 8;
  c.bucket.set_rate(rate, std::max(64e3, rate / 100));  // 10 ms of burst
  // An idle client (nothing queued) may have just been created with a small bucket: its record
  // leaves in one burst of its own rate's 10 ms, not in slices paced by timer wake-ups.
  if (c.jobs.empty()) c.bucket.fill();
  bool repair = false;
  if (options_.test_drop.any()) repair = !test_seen_.insert({r->session_id, r->record_seq}).second;
  c.jobs.push_back({*r, std::get<UdpJob>(std::move(d)), 0, repair ? 0 : jobs_admitted_++, repair});
  ++jobs_;
}

void UdpService::send_error(Client& c, std::size_t request_size, proto::WriteRecordError e, Clock::time_point now) {
  auto bytes = proto::encode(e);
  // Never larger than what came: the reason is shortened to fit, and a datagram too small to hold
  // an error gets none.
  if (request_size < sizeof(proto::WireWriteRecordErrorFixed) || c.error_budget.available(now) < 1) {
    ++stats_.dropped;
    return;
  }
  if (bytes.size() > request_size) {
    e.reason.resize(request_size - sizeof(proto::WireWriteRecordErrorFixed));
    bytes = proto::encode(e);
  }
  c.error_budget.take(1);
  ++stats_.errors_sent;
  send_small(c, bytes);
}

void UdpService::send_small(Client& c, const std::vector<std::uint8_t>& bytes) {
  if (sendto(fd_, bytes.data(), bytes.size(), MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&c.addr), c.addr_len) < 0)
    log::debug("udp", "sendto " + describe(c.addr) + ": " + std::strerror(errno));
}

void UdpService::on_timer() {
  std::uint64_t expirations = 0;
  (void)!::read(timer_, &expirations, sizeof expirations);
  armed_ = Clock::time_point::max();  // a one-shot timer that fired is disarmed
  pump(Clock::now());
}

void UdpService::pump(Clock::time_point now) {
  // Up to kSendsPerClient GSO sends (runs of equal-size datagrams of one record) per client per
  // round, round robin, until the buckets or the socket say stop: a whole record usually leaves in
  // one sendmmsg.
  struct Send {
    std::vector<proto::WireWriteRecordDataHeader> headers;
    std::vector<iovec> iov;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(std::uint16_t))];
  };
  bool progress = true;
  while (progress) {
    progress = false;
    std::vector<Send> sends;
    std::vector<Client*> owners;
    std::size_t built = 0;
    sends.reserve(kBatch);
    for (auto& [key, c] : clients_) {
      std::size_t next_job = 0;
      for (std::size_t round = 0; round < kSendsPerClient; ++round) {
        while (next_job < c.jobs.size() && c.jobs[next_job].sent >= c.jobs[next_job].data.bytes.size()) ++next_job;
        if (next_job >= c.jobs.size() || sends.size() >= kBatch) break;
        Job& j = c.jobs[next_job];
        const std::size_t payload = j.data.payload;
        const double wire = static_cast<double>(payload + sizeof(proto::WireWriteRecordDataHeader));
        const double budget = std::min(c.bucket.available(now), total_.available(now));
        const bool gso = gso_ && !options_.test_drop.any();
        std::size_t count = std::min<std::size_t>({gso ? kGsoSegments : 1, static_cast<std::size_t>(budget / wire),
                                                   gso ? kGsoBytes / static_cast<std::size_t>(wire) : 1});
        const std::uint64_t left = j.data.bytes.size() - j.sent;
        count = std::min<std::size_t>(count, (left + payload - 1) / payload);
        if (count == 0) break;
        Send s;
        s.headers.reserve(count);
        s.iov.reserve(2 * count);
        std::uint64_t at = j.sent;
        for (std::size_t k = 0; k < count; ++k) {
          const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(payload, j.data.bytes.size() - at));
          proto::WriteRecordData d;
          d.session_id = j.request.session_id;
          d.epoch = j.request.epoch;
          d.record_seq = j.request.record_seq;
          d.record_length = j.data.bytes.size();
          d.record_offset = at;
          d.buffer_offset = j.request.buffer_offset;
          d.flags = at + n == j.data.bytes.size() ? proto::kRecordLastDatagram : 0;
          d.payload = j.data.bytes.subspan(static_cast<std::size_t>(at), n);
          s.headers.push_back(proto::data_header(d));
          at += n;
        }
        for (std::size_t k = 0; k < count; ++k) {
          s.iov.push_back({&s.headers[k], sizeof(proto::WireWriteRecordDataHeader)});
          const std::uint64_t off = j.sent + k * payload;
          const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(payload, j.data.bytes.size() - off));
          s.iov.push_back({const_cast<std::uint8_t*>(j.data.bytes.data() + off), n});  // sendmsg reads, never writes
        }
        ++built;
        const double bytes = static_cast<double>((at - j.sent) + count * sizeof(proto::WireWriteRecordDataHeader));
        c.bucket.take(bytes);
        total_.take(bytes);
        j.sent = at;
        if (options_.test_drop.any() && test_dropped(j, at == j.data.bytes.size())) continue;  // "lost": paced, never sent
        sends.push_back(std::move(s));
        owners.push_back(&c);
      }
    }
    if (sends.empty()) {
      if (!built) break;  // the buckets are empty
      finish_sent_jobs();  // the test hook "lost" all this round built
      progress = true;
      continue;
    }
    std::vector<mmsghdr> msgs(sends.size());
    for (std::size_t i = 0; i < sends.size(); ++i) {
      Send& s = sends[i];
      msghdr& m = msgs[i].msg_hdr;
      m.msg_name = &owners[i]->addr;
      m.msg_namelen = owners[i]->addr_len;
      m.msg_iov = s.iov.data();
      m.msg_iovlen = s.iov.size();
      const std::size_t segments = s.headers.size();
      if (gso_ && segments > 1) {
        m.msg_control = s.control;
        m.msg_controllen = sizeof s.control;
        cmsghdr* cm = CMSG_FIRSTHDR(&m);
        cm->cmsg_level = SOL_UDP;
        cm->cmsg_type = UDP_SEGMENT;
        cm->cmsg_len = CMSG_LEN(sizeof(std::uint16_t));
        const auto size = static_cast<std::uint16_t>(s.iov[0].iov_len + s.iov[1].iov_len);  // every segment but the last
        std::memcpy(CMSG_DATA(cm), &size, sizeof size);
      }
      stats_.datagrams += segments;
    }
    const int sent = sendmmsg(fd_, msgs.data(), static_cast<unsigned>(msgs.size()), MSG_DONTWAIT);
    if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) log::warn("udp", std::string("sendmmsg: ") + std::strerror(errno));
    stats_.sends += sent > 0 ? static_cast<std::uint64_t>(sent) : 0;
    for (std::size_t i = 0; i < sends.size(); ++i) {
      std::uint64_t b = 0;
      for (const auto& v : sends[i].iov) b += v.iov_len;
      if (static_cast<int>(i) < sent) stats_.bytes += b;
      // What the socket did not take is lost as if the network dropped it: the client asks again.
    }
    finish_sent_jobs();
    progress = sent == static_cast<int>(sends.size());
  }
  arm_timer(now);
}

void UdpService::finish_sent_jobs() {
  for (auto& [key, c] : clients_) {
    while (!c.jobs.empty() && c.jobs.front().sent >= c.jobs.front().data.bytes.size()) {
      c.jobs.pop_front();
      --jobs_;
    }
  }
}

void UdpService::arm_timer(Clock::time_point now) {
  // Wake when the first waiting client's next datagram fits its buckets; sweep idle clients.
  Clock::time_point next = Clock::time_point::max();
  for (auto it = clients_.begin(); it != clients_.end();) {
    Client& c = it->second;
    if (c.jobs.empty()) {
      // Budgets must outlive a flood's gaps; then the client is forgotten.
      if (c.error_budget.available(now) >= 20 && c.hello_budget.available(now) >= 10 && c.bucket.available(now) >= 64e3) {
        it = clients_.erase(it);
        continue;
      }
      // Sweeps need no precision: on a 100 ms grid, so that most pumps leave the timer as it is.
      const auto sweep = now + std::chrono::duration_cast<Clock::duration>(kIdleClient);
      const auto grid = std::chrono::duration_cast<Clock::duration>(std::chrono::milliseconds(100));
      next = std::min(next, Clock::time_point((sweep.time_since_epoch() / grid + 1) * grid));
      ++it;
      continue;
    }
    const double wire = static_cast<double>(c.jobs.front().data.payload + sizeof(proto::WireWriteRecordDataHeader));
    next = std::min(next, std::max(c.bucket.when(wire, now), total_.when(wire, now)));
    ++it;
  }
  if (next != Clock::time_point::max()) next = std::max(next, now + std::chrono::microseconds(50));
  if (next == armed_) return;  // one system call fewer per request, most of the time
  armed_ = next;
  itimerspec spec{};
  if (next != Clock::time_point::max()) {
    // Absolute, on CLOCK_MONOTONIC: the clock steady_clock reads on Linux.
    const auto at = std::chrono::duration_cast<std::chrono::nanoseconds>(next.time_since_epoch()).count();
    spec.it_value.tv_sec = static_cast<time_t>(at / 1'000'000'000);
    spec.it_value.tv_nsec = static_cast<long>(at % 1'000'000'000);
  }
  timerfd_settime(timer_, TFD_TIMER_ABSTIME, &spec, nullptr);
}

}  // namespace vod::server::udp
